package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rpcReply is a JSON-RPC response as the test reads it.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestMCPSurvivesMalformedFrames feeds the built `memsync mcp` each
// malformed frame, then a valid tools/call: the bad frame is answered with
// a JSON-RPC error (its id when it has a valid one, else null) and the call
// that follows is answered, in the same session.
func TestMCPSurvivesMalformedFrames(t *testing.T) {
	repo := newRepo(t, "planner")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, memsyncBinary(t), "mcp", "--agent", "planner", "--repo", repo)
	cmd.Env = append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_AGENT=", "MEMSYNC_GRAPH=", "MEMSYNC_NEO4J_URI=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedWriter{w: &bytes.Buffer{}} // written by exec's copier while the test reads it
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	replies := bufio.NewReader(stdout)
	send := func(frame string) {
		t.Helper()
		if _, err := io.WriteString(stdin, frame+"\n"); err != nil {
			t.Fatalf("write %q: %v (the server is gone; stderr %s)", frame, err, stderr.String())
		}
	}
	// until reads replies up to the one with id; the replies before it are returned.
	until := func(id int) []rpcReply {
		t.Helper()
		var before []rpcReply
		for {
			line, err := replies.ReadBytes('\n')
			if err != nil {
				t.Fatalf("waiting for reply %d: %v (the server ended; stderr %s)", id, err, stderr.String())
			}
			var r rpcReply
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("reply %q: %v", line, err)
			}
			if string(r.ID) == fmt.Sprint(id) {
				if r.Result == nil {
					t.Fatalf("call %d: no result: %s", id, line)
				}
				return before
			}
			before = append(before, r)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	until(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for i, tc := range []struct {
		name, frame string
		code        int64  // 0: no answer (a blank line)
		id          string // the error's id
	}{
		{"not JSON", "hello there", -32700, "null"},
		{"cut short", `{"jsonrpc":"2.0","id":5,"meth`, -32700, "null"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":41,"method":"tools/list"}`, -32600, "41"},
		{"no version", `{"id":"s-1","method":"tools/list"}`, -32600, `"s-1"`},
		{"a batch", `[{"jsonrpc":"2.0","id":42,"method":"tools/list"}]`, -32600, "null"},
		{"an empty batch", `[]`, -32600, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\xfe\"}}", -32700, "null"},
		{"invalid UTF-8 after the message", "{\"jsonrpc\":\"2.0\",\"id\":48,\"method\":\"tools/list\"}\xff", -32700, "null"},
		{"two messages on a line", `{"jsonrpc":"2.0","id":44,"method":"tools/list"} {"jsonrpc":"2.0","id":45,"method":"tools/list"}`, -32700, "null"},
		{"an object as id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null"},
		{"a number as method", `{"jsonrpc":"2.0","id":46,"method":5}`, -32600, "46"},
		{"a string", `"tools/list"`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"an error with a string code", `{"jsonrpc":"2.0","id":49,"error":{"code":"x"}}`, -32600, "49"},
		{"an id out of range", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, -32600, "null"},
		{"a long bad error", `{"jsonrpc":"2.0","id":50,"error":{"code":"` + strings.Repeat("é", 5000) + `"}}`, -32600, "50"}, // the decoder quotes it
		{"nested too deep", `{"jsonrpc":"2.0","id":47,"method":"tools/list","params":{"x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`, -32600, "47"},
		{"a blank line", "  \t", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := 100 + i
			send(tc.frame)
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"status","arguments":{}}}`, id))
			before := until(id)
			if tc.code == 0 {
				if len(before) != 0 {
					t.Fatalf("answered a blank line: %+v", before)
				}
				return
			}
			if len(before) != 1 || before[0].Error == nil || before[0].Error.Code != tc.code || string(before[0].ID) != tc.id {
				t.Fatalf("replies before the call: %+v (want one error %d with id %s)", before, tc.code, tc.id)
			}
			if m := before[0].Error.Message; m == "" || len(m) > 300 {
				t.Fatalf("the error says %q (want a reason, short)", m)
			}
		})
	}
	if !strings.Contains(stderr.String(), "memsync mcp: answered a malformed message with error -32700") {
		t.Errorf("stderr does not say what was refused: %s", stderr.String())
	}
}
