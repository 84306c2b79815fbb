package mcpserver

import "testing"

// TestMCPFieldWords: a command's refusal reaches an MCP client in the
// words of the tool's schema, and the client's own values unchanged.
func TestMCPFieldWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"TEXT: required (or - to read it from stdin)", "text: required (or - to read it from stdin)"},
		{`--max-age: invalid value "forever" (see memsync append --help)`, `max_age: invalid value "forever"`},
		{`--tag: "--agent=critic" is too long`, `tags: "--agent=critic" is too long`},
		{`--entity "a \"--b\"" and --source-type`, `entities "a \"--b\"" and source_type`},
		{"nothing to rename", "nothing to rename"},
	} {
		if got := mcpFieldWords(tc.in); got != tc.want {
			t.Errorf("mcpFieldWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
