package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// defaultBodyLimit bounds request bodies of routes that do not set their own.
const defaultBodyLimit = 1 << 20

// decode reads a JSON object from the body into v. Malformed JSON, a body that
// is not an object, wrong field types and trailing data are 422 (the status
// FastAPI gives a failed body validation) with a detail that names the
// problem; an oversized body is 413.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, "Request body too large (limit %d bytes)", mbe.Limit)
		}
		return errorf(http.StatusBadRequest, "Could not read the request body")
	}
	return decodeBytes(body, v)
}

func decodeBytes(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return errorf(http.StatusUnprocessableEntity, "Request body is empty; a JSON object is required")
	}
	if trimmed[0] != '{' {
		return errorf(http.StatusUnprocessableEntity, "Request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "body"
			}
			return errorf(http.StatusUnprocessableEntity, "Field %q must be %s, not %s", field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return errorf(http.StatusUnprocessableEntity, "Malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return errorf(http.StatusUnprocessableEntity, "Malformed JSON: unexpected data after the object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int64", "int32", "float64", "float32", "uint", "uint64":
		return "a number"
	}
	return "of type " + goKind
}

// required returns a 422 naming the first empty required field.
func required(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if strings.TrimSpace(fields[i+1]) == "" {
			return errorf(http.StatusUnprocessableEntity, "Field %q is required", fields[i])
		}
	}
	return nil
}
