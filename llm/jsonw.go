package llm

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Hand-written JSON appenders for the streaming hot path: every chunk this package emits is
// built by appending to a reused buffer, with no reflection and no intermediate maps. The
// output is compact, keeps non-ASCII as UTF-8 and does not HTML-escape (encoding/json
// would turn "<" into \u003c; both are valid JSON, clients do not care, and the raw form
// is cheaper and easier to read in goldens).

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as in
// encoding/json; U+2028 and U+2029 are escaped so the output is also valid JavaScript.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendStringBytes is appendString for a byte slice (no conversion allocation).
func appendStringBytes(dst, b []byte) []byte {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return appendString(dst, string(b))
		}
	}
	dst = append(dst, '"')
	dst = append(dst, b...)
	return append(dst, '"')
}

// appendKey appends `"key":` for a key known to need no escaping.
func appendKey(dst []byte, key string) []byte {
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// appendPyFloat appends f the way Python's json.dumps writes a float: shortest round-trip
// digits, always with a fraction or exponent ("126.0", not "126"), so values computed the
// way Open WebUI computes them also look the same.
func appendPyFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, '0')
	}
	start := len(dst)
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	} else {
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, '.', '0')
}
