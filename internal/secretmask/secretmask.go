// Package secretmask hides known secret values in text that leaves a
// process: error messages and log lines that go into an app's status, its
// workflow history, the manifest cache's failure entries and the logs.
//
// A Set is told the values (Add) and the delimiters that tools split
// values at (AddDelimiter); Mask then replaces every form of every value
// a message could quote: the value itself, its base64 (standard and URL
// alphabets, padded or not), its escaped forms (JSON, Go's %q, YAML's
// single quotes, Go's %v of its bytes), each of its lines, and each part of it split at a
// delimiter. Masking by value rather than by message shape means that a
// tool's new message cannot let a value through.
//
//	var s secretmask.Set
//	s.Add("hunter22-prod", "Secret db, data.password")
//	s.AddDelimiter("-")
//	s.Mask("bad value hunter22-prod") // "bad value ****** (****** stands for …)"
package secretmask

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// MinLength is the shortest value, line or part that is masked. A value
// of 1 to 3 bytes has so few possibilities that it is guessed at once
// whether shown or not, and masking it would black out the words and
// numbers every message is made of ("app", "80", "key"), so that no error
// would say what went wrong any more; from 4 bytes on, masking costs a
// message little and a guess starts to cost something.
const MinLength = 4

// Masked replaces a value in a message.
const Masked = "******"

// Set is the secret values one render met. The zero value is empty and
// ready to use; Add and AddDelimiter must not be called once Mask has been.
type Set struct {
	values []value
	delims []string
	seen   map[string]bool

	once  sync.Once
	forms []form // every form of every value, longest first
}

type value struct{ text, origin string }

// form is a string that stands for a value in a message.
type form struct{ text, origin string }

// Add records v, which origin names for the message (the object and the
// field it came from, e.g. "Secret db, data.password", never the value).
// Values shorter than MinLength are not recorded.
func (s *Set) Add(v, origin string) {
	if len(strings.TrimSpace(v)) < MinLength {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[v] {
		return
	}
	s.seen[v] = true
	s.values = append(s.values, value{text: v, origin: origin})
}

// AddDelimiter records a string a tool splits values at (Kustomize's
// replacement options.delimiter, a chart's split): each part of a value
// split at it is masked too.
func (s *Set) AddDelimiter(d string) {
	if d == "" || slices.Contains(s.delims, d) {
		return
	}
	s.delims = append(s.delims, d)
}

// Len is how many values s holds.
func (s *Set) Len() int { return len(s.values) }

// build computes every form of every value, once.
func (s *Set) build() {
	s.once.Do(func() {
		seen := map[string]bool{}
		add := func(text, origin string) {
			if len(text) >= MinLength && !seen[text] {
				seen[text] = true
				s.forms = append(s.forms, form{text, origin})
			}
		}
		for _, v := range s.values {
			for _, f := range encodings(v.text) {
				add(f, v.origin)
			}
			for _, piece := range s.pieces(v.text) {
				for _, f := range encodings(piece) {
					add(f, v.origin)
				}
			}
		}
		// Longest first: a value that holds another is masked whole.
		slices.SortStableFunc(s.forms, func(a, b form) int { return len(b.text) - len(a.text) })
	})
}

// pieces are v's lines, trimmed, and its parts at every delimiter.
func (s *Set) pieces(v string) []string {
	var out []string
	for _, line := range strings.Split(v, "\n") {
		out = append(out, strings.TrimSpace(line))
	}
	if t := strings.TrimSpace(v); t != v {
		out = append(out, t)
	}
	for _, d := range s.delims {
		out = append(out, strings.Split(v, d)...)
	}
	return out
}

// encodings are the forms in which v can appear in a message.
func encodings(v string) []string {
	b := []byte(v)
	out := []string{v,
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
		strings.ReplaceAll(v, "'", "''"),
	}
	// Go's %v of the bytes, as a parser quotes a line it cannot read:
	// [104 117 110 …].
	out = append(out, strings.Trim(fmt.Sprint(b), "[]"))
	if q := strconv.Quote(v); len(q) >= 2 {
		out = append(out, q[1:len(q)-1])
	}
	if j, err := json.Marshal(v); err == nil && len(j) >= 2 {
		out = append(out, string(j[1:len(j)-1]))
	}
	return out
}

// maxOrigins is how many values' origins a masked message names.
const maxOrigins = 3

// Mask replaces every form of every value of s in msg with Masked and,
// when it replaced any, says whose values were masked, so that the
// message still names the object and field at fault.
func (s *Set) Mask(msg string) string {
	if s == nil || len(s.values) == 0 || msg == "" {
		return msg
	}
	s.build()
	var origins []string
	for _, f := range s.forms {
		if !strings.Contains(msg, f.text) {
			continue
		}
		msg = strings.ReplaceAll(msg, f.text, Masked)
		if !slices.Contains(origins, f.origin) {
			origins = append(origins, f.origin)
		}
	}
	if len(origins) == 0 {
		return msg
	}
	more := ""
	if len(origins) > maxOrigins {
		more = ", …"
		origins = origins[:maxOrigins]
	}
	// An origin names keys, not values; it is masked all the same, in case
	// a value equals a key.
	note := s.Replace(strings.Join(origins, "; ") + more)
	return msg + " (" + Masked + " stands for a secret value, never shown: " + note + ")"
}

// Replace masks as Mask does, without saying whose values it masked: for
// the parts of a message that are names (a path, a file).
func (s *Set) Replace(msg string) string {
	if s == nil || len(s.values) == 0 || msg == "" {
		return msg
	}
	s.build()
	for _, f := range s.forms {
		msg = strings.ReplaceAll(msg, f.text, Masked)
	}
	return msg
}
