package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestNeo4jNone: --neo4j-uri none leaves the Neo4j column not measured,
// without trying to reach a server (it once failed: "invalid URI").
func TestNeo4jNone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the ceiling figure")
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"--quick", "--only", "ceiling", "--records", "200", "--neo4j-uri", "none"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "not measured (--neo4j-uri none)") {
		t.Fatalf("the Neo4j column does not say it was not measured:\n%s", stdout.String())
	}
}
