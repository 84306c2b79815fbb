package cmdline

import "strings"

// ShellQuote is s as one word of a POSIX shell command: s itself when it
// holds only characters no shell treats specially, else s in single
// quotes, each single quote in it closed, escaped and reopened (so the
// empty string is two single quotes).
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '@' || r == '=' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
