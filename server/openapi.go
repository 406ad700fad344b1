package server

import (
	"bytes"
	"html/template"
	"net/http"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"unicode"
)

// The OpenAPI document is generated from the route table, so it lists
// exactly the routes that exist: one operation per route, nothing else. It
// describes paths, path parameters, access levels and security; bodies are
// documented as free-form JSON objects (the wire shapes live in COMPAT.md).

// apiOp is one route as the documentation sees it.
type apiOp struct {
	Method      string // upper case: GET, POST...
	Path        string // OpenAPI path: "/api/v1/users/{user_id}"
	Tag         string
	OperationID string
	Summary     string
	Access      access
	Params      []string
}

var pathParamRe = regexp.MustCompile(`\{([^{}]+)\}`)

// apiOperations lists the routes in table order.
func (s *Server) apiOperations() []apiOp {
	ops := make([]apiOp, 0, len(s.routes))
	seen := map[string]bool{}
	for _, rt := range s.routes {
		method, path := splitPattern(rt.pattern)
		op := apiOp{Method: method, Path: path, Tag: pathTag(path), Access: rt.access}
		for _, m := range pathParamRe.FindAllStringSubmatch(path, -1) {
			op.Params = append(op.Params, m[1])
		}
		name := handlerName(rt.h)
		op.Summary = humanize(name)
		op.OperationID = lowerFirst(name)
		if op.OperationID == "" || seen[op.OperationID] {
			op.OperationID = strings.ToLower(method) + strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_").Replace(path)
		}
		seen[op.OperationID] = true
		ops = append(ops, op)
	}
	return ops
}

// splitPattern turns a ServeMux pattern into a method and an OpenAPI path:
// "{$}" disappears and "{rest...}" becomes "{rest}". A pattern without a
// method matches every method; it is documented as GET.
func splitPattern(pattern string) (method, path string) {
	method, path, found := strings.Cut(pattern, " ")
	if !found {
		method, path = "GET", pattern
	}
	path = strings.TrimSpace(path)
	if i := strings.Index(path, "/"); i > 0 { // host-specific pattern
		path = path[i:]
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = strings.ReplaceAll(path, "...}", "}")
	return strings.ToUpper(method), path
}

// pathTag groups operations: the first segment after /api/v1/ (or /api/),
// the first segment of the proxy prefixes, and "system" for the rest
// (health, docs, manifest).
func pathTag(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 3 && segs[0] == "api" && segs[1] == "v1":
		return segs[2]
	case len(segs) >= 2 && segs[0] == "api" && segs[1] != "v1":
		return segs[1]
	case len(segs) >= 1 && (segs[0] == "ollama" || segs[0] == "runtime" || segs[0] == "openai" || segs[0] == "oauth"):
		return segs[0]
	}
	return "system"
}

// handlerName is the method name of a handler ("ListUsers" for
// s.handleListUsers), or "" when it cannot be told.
func handlerName(h handlerFunc) string {
	if h == nil {
		return ""
	}
	fn := runtime.FuncForPC(reflect.ValueOf(h).Pointer())
	if fn == nil {
		return ""
	}
	name := fn.Name() // hearth/server.(*Server).handleListUsers-fm
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSuffix(name, "-fm")
	if !strings.HasPrefix(name, "handle") || len(name) == len("handle") {
		return ""
	}
	return strings.TrimPrefix(name, "handle")
}

// humanize splits a CamelCase name into words, keeping acronyms whole:
// "GetAdminConfig" → "Get admin config", "OpenAPI" → "Open API".
func humanize(name string) string {
	rs := []rune(name)
	var words []string
	start := 0
	for i := 1; i < len(rs); i++ {
		if !unicode.IsUpper(rs[i]) {
			continue
		}
		// A word ends before an upper-case letter that follows a lower-case
		// one, or that starts a new word after an acronym ("APIKeys").
		if unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
			words = append(words, string(rs[start:i]))
			start = i
		}
	}
	if start < len(rs) {
		words = append(words, string(rs[start:]))
	}
	for i, w := range words {
		if i > 0 && !isAcronym(w) {
			words[i] = strings.ToLower(w)
		}
	}
	return strings.Join(words, " ")
}

func isAcronym(w string) bool {
	return len(w) > 1 && strings.ToUpper(w) == w
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	rs := []rune(s)
	n := 0
	for n < len(rs) && unicode.IsUpper(rs[n]) {
		n++
	}
	if n > 1 && n < len(rs) { // "LDAP" stays "ldap"; "APIKeys" → "apiKeys"
		n--
	}
	for i := 0; i < n; i++ {
		rs[i] = unicode.ToLower(rs[i])
	}
	return string(rs)
}

// accessText describes an access level for people.
func accessText(a access) string {
	switch a {
	case public:
		return "No credential needed."
	case anyRole:
		return "Any signed-in account, pending included."
	case verified:
		return "A user or admin account (pending accounts get 401)."
	case admin:
		return "Admin only (others get 401)."
	case scimToken:
		return "SCIM_ENABLED and the SCIM_TOKEN bearer (user credentials do not count; others get 401)."
	case scimOpen:
		return "SCIM_ENABLED; no credential needed (401 while SCIM is off)."
	}
	return ""
}

// openAPI builds the OpenAPI 3.1 document of the route table.
func (s *Server) openAPI() map[string]any {
	c := s.cfg()
	errResp := func(desc string) map[string]any {
		return map[string]any{
			"description": desc,
			"content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/Error"},
			}},
		}
	}
	paths := map[string]map[string]any{}
	tags := map[string]bool{}
	for _, op := range s.apiOperations() {
		tags[op.Tag] = true
		okContent := map[string]any{"application/json": map[string]any{"schema": map[string]any{}}}
		if op.Path == "/docs" {
			okContent = map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}
		}
		o := map[string]any{
			"operationId": op.OperationID,
			"summary":     op.Summary,
			"description": accessText(op.Access),
			"tags":        []string{op.Tag},
			"x-access":    op.Access.String(),
			"responses": map[string]any{
				"200":     map[string]any{"description": "Success", "content": okContent},
				"default": errResp("Error"),
			},
		}
		if op.Access == public {
			o["security"] = []any{} // explicitly none
		} else {
			o["responses"].(map[string]any)["401"] = errResp("Not signed in, or not allowed")
		}
		if len(op.Params) > 0 {
			var params []any
			for _, p := range op.Params {
				params = append(params, map[string]any{
					"name": p, "in": "path", "required": true, "schema": map[string]any{"type": "string"},
				})
			}
			o["parameters"] = params
		}
		switch op.Method {
		case "POST", "PUT", "PATCH":
			o["requestBody"] = map[string]any{
				"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}},
			}
		}
		if paths[op.Path] == nil {
			paths[op.Path] = map[string]any{}
		}
		paths[op.Path][strings.ToLower(op.Method)] = o
	}

	schemes := map[string]any{
		"bearerAuth": map[string]any{
			"type": "http", "scheme": "bearer",
			"description": "A session JWT (from /api/v1/auths/signin) or an sk- API key.",
		},
		"cookieAuth": map[string]any{"type": "apiKey", "in": "cookie", "name": "token"},
	}
	security := []any{map[string]any{"bearerAuth": []string{}}, map[string]any{"cookieAuth": []string{}}}
	if h := c.CustomAPIKeyHeader; h != "" {
		schemes["apiKeyHeader"] = map[string]any{"type": "apiKey", "in": "header", "name": h,
			"description": "An sk- API key; wins over the Authorization header."}
		security = append(security, map[string]any{"apiKeyHeader": []string{}})
	}

	tagList := make([]string, 0, len(tags))
	for t := range tags {
		tagList = append(tagList, t)
	}
	sort.Strings(tagList)
	tagObjs := make([]any, 0, len(tagList))
	for _, t := range tagList {
		tagObjs = append(tagObjs, map[string]string{"name": t})
	}

	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       c.WebUIName + " API",
			"version":     s.version,
			"description": "Generated from Hearth's route table. Errors are {\"detail\": \"...\"}.",
		},
		"tags":     tagObjs,
		"paths":    paths,
		"security": security,
		"components": map[string]any{
			"securitySchemes": schemes,
			"schemas": map[string]any{
				"Error": map[string]any{
					"type":       "object",
					"properties": map[string]any{"detail": map[string]any{}},
					"required":   []string{"detail"},
				},
			},
		},
	}
}

// docsPage renders /docs on the server: no script, no external resources.
var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.25rem}
table{border-collapse:collapse;width:100%}td{padding:.3rem .5rem;vertical-align:top;border-bottom:1px solid #f0f0f0}
code{font:13px ui-monospace,monospace}.m{font-weight:600;width:4.5rem}.a{color:#666;font-size:13px;white-space:nowrap}
.GET{color:#1a7f37}.POST{color:#0969da}.PUT,.PATCH{color:#9a6700}.DELETE{color:#cf222e}
@media (prefers-color-scheme:dark){body{background:#111;color:#ddd}td{border-color:#222}h2{border-color:#333}.a{color:#999}}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p>Version {{.Version}}. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).
Authenticate with <code>Authorization: Bearer &lt;token or sk- key&gt;</code>.</p>
{{range .Groups}}<h2 id="{{.Tag}}">{{.Tag}}</h2>
<table>{{range .Ops}}
<tr><td class="m {{.Method}}">{{.Method}}</td><td><code>{{.Path}}</code><br>{{.Summary}}</td><td class="a">{{.Access}}</td></tr>{{end}}
</table>
{{end}}</body>
</html>
`))

type docsOp struct{ Method, Path, Summary, Access string }
type docsGroup struct {
	Tag string
	Ops []docsOp
}

// writeDocsPage writes the /docs page, operations grouped by tag.
func (s *Server) writeDocsPage(w http.ResponseWriter) error {
	byTag := map[string][]docsOp{}
	for _, op := range s.apiOperations() {
		byTag[op.Tag] = append(byTag[op.Tag], docsOp{Method: op.Method, Path: op.Path, Summary: op.Summary, Access: op.Access.String()})
	}
	tags := make([]string, 0, len(byTag))
	for t := range byTag {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	data := struct {
		Title, Version string
		Groups         []docsGroup
	}{Title: s.cfg().WebUIName + " API", Version: s.version}
	for _, t := range tags {
		data.Groups = append(data.Groups, docsGroup{Tag: t, Ops: byTag[t]})
	}
	var buf bytes.Buffer
	if err := docsPage.Execute(&buf, data); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
	return nil
}
