package render

import "regexp"

// secretAssignment is a value given to a Secret-looking name in a tool's
// output: password=…, "token": "…", apiKey: …, Authorization: Bearer ….
var secretAssignment = regexp.MustCompile(`(?i)((?:password|passwd|secret|token|api[_-]?key|credentials?|private[_-]?key|authorization|auth)[A-Za-z0-9_.-]*["']?\s*[:=]\s*["']?)(?:bearer\s+|basic\s+)?[^\s"',;]+`)

// pemBlock is a PEM private key or certificate body.
var pemBlock = regexp.MustCompile(`(?s)-----BEGIN [A-Z ]+-----.*?-----END [A-Z ]+-----`)

// longBase64 is a run of base64 long enough to be a key or a Secret's
// data rather than a word.
var longBase64 = regexp.MustCompile(`[A-Za-z0-9+/]{40,}={0,2}`)

// maskSecrets hides what looks like a secret in a plugin's error output
// before it goes into the app's status, histories and logs: values of
// Secret-looking names, PEM blocks and long base64 runs.
func maskSecrets(s string) string {
	s = pemBlock.ReplaceAllString(s, "(a PEM block, not shown)")
	s = secretAssignment.ReplaceAllString(s, "${1}******")
	return longBase64.ReplaceAllString(s, "******")
}
