package e2e

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
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
				trimmed[k] = v
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
