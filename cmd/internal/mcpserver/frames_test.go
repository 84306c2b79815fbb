package mcpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestFrameFilter: the filter passes well-formed frames on unchanged (a
// CRLF or a missing last newline too), refuses a frame beyond its bound
// and goes on with the next.
func TestFrameFilter(t *testing.T) {
	valid := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tc := range []struct {
		name, in, pass, answer string
	}{
		{"as is", valid + "\n", valid + "\n", ""},
		{"CRLF", valid + "\r\n", valid + "\n", ""},
		{"no last newline", valid, valid + "\n", ""},
		{"too long, then a valid one", `{"jsonrpc":"2.0","id":2,"method":"` + strings.Repeat("x", 200) + `"}` + "\n" + valid + "\n", valid + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message longer than 100 bytes"}}` + "\n"},
		{"a notification with a bad version", `{"jsonrpc":"2.1","method":"x"}` + "\n" + valid + "\n", valid + "\n",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: invalid message version tag \"2.1\"; expected \"2.0\""}}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			f := newFrameFilter(strings.NewReader(tc.in), &out, io.Discard, 100)
			got, err := io.ReadAll(f)
			if err != nil || string(got) != tc.pass || out.String() != tc.answer {
				t.Fatalf("passed %q (%v), answered %q; want %q and %q", got, err, out.String(), tc.pass, tc.answer)
			}
		})
	}
}
