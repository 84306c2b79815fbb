package e2e

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var recordRequests = flag.Bool("record-requests", false, "write the model requests of each host's session to testdata/requests/ (the checker's table test reads them)")

// recordedRequests writes a session's requests, trimmed to what the
// checker reads (no system prompt, tools by name), to testdata/requests/.
func recordedRequests(t *testing.T, name string, reqs []loggedRequest) {
	t.Helper()
	var out []loggedRequest
	for _, r := range reqs {
		var body map[string]json.RawMessage
		if json.Unmarshal(r.Body, &body) != nil {
			continue
		}
		trimmed := map[string]json.RawMessage{}
		for _, k := range []string{"model", "messages", "input"} {
			if v, ok := body[k]; ok {
				trimmed[k] = elideHostText(v)
			}
		}
		var tools []json.RawMessage
		json.Unmarshal(body["tools"], &tools)
		var names []map[string]string
		for _, tl := range tools {
			for _, n := range responsesToolNames(tl) {
				names = append(names, map[string]string{"name": n})
			}
		}
		trimmed["tools"], _ = json.Marshal(names)
		b, _ := json.Marshal(trimmed)
		out = append(out, loggedRequest{Phase: r.Phase, Path: r.Path, Body: b})
	}
	data, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "requests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// elideHostText replaces, in a request's messages or input items, each
// long text that is the host's own (its instructions, reminders, tool
// lists: none of memsync's words, no compaction prompt) with a
// placeholder: the recorded requests keep what the checker reads and
// carry no copy of a host's prompts.
func elideHostText(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			if x["type"] == "tool_result" || x["type"] == "function_call_output" {
				return x // a tool's answer is what the checker looks for
			}
			for k, y := range x {
				if s, ok := y.(string); ok && (k == "text" || k == "content") {
					x[k] = elided(s)
					continue
				}
				x[k] = walk(y)
			}
		case []any:
			for i, y := range x {
				x[i] = walk(y)
			}
		}
		return x
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return raw
	}
	return out
}

// hostTextPlaceholder stands for a host's own text in recorded requests.
const hostTextPlaceholder = "[host text elided]"

func elided(s string) string {
	if len(s) <= 200 || strings.Contains(s, "memsync") || strings.Contains(s, "Working memory") || compactRequest.MatchString(s) {
		return s
	}
	return hostTextPlaceholder
}
