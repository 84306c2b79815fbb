package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestNeo4jKeyedCeiling runs the ceiling figure on the test Neo4j server:
// the keyed ceiling is measured (it checks itself that every row became a
// memory with its WROTE edge) and reported, and leaves neither nodes nor
// schema behind.
func TestNeo4jKeyedCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the ceiling figure on Neo4j")
	}
	uri := os.Getenv("MEMSYNC_NEO4J_URI")
	if uri == "" {
		if os.Getenv("MEMSYNC_REQUIRE_NEO4J") == "1" {
			t.Fatal("MEMSYNC_REQUIRE_NEO4J=1 but MEMSYNC_NEO4J_URI is empty")
		}
		t.Skip("MEMSYNC_NEO4J_URI not set (scripts/neo4j start)")
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"--quick", "--only", "ceiling", "--records", "300", "--neo4j-uri", uri}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"Neo4j engine ceiling with memsync's keys run 1:", "with what SPEC §4 asks of a memory:"} {
		if !strings.Contains(stdout.String()+stderr.String(), want) {
			t.Errorf("the output does not say %q:\nstdout:\n%s\nstderr:\n%s", want, stdout.String(), stderr.String())
		}
	}
	ctx := context.Background()
	drv, err := neo4jdrv.NewDriverWithContext(uri, neo4jdrv.BasicAuth(os.Getenv("MEMSYNC_NEO4J_USER"), os.Getenv("MEMSYNC_NEO4J_PASSWORD"), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(ctx)
	db := neo4jdrv.ExecuteQueryWithDatabase(os.Getenv("MEMSYNC_NEO4J_DATABASE"))
	for _, q := range []string{
		"MATCH (n) WHERE n:" + keyedLabel + " OR n:" + keyedAgentLabel + " OR n:" + keyedEntityLabel + " RETURN count(n)",
		"SHOW CONSTRAINTS YIELD name WHERE name STARTS WITH 'bench_keyed' RETURN count(*)",
		"SHOW INDEXES YIELD name WHERE name STARTS WITH 'bench_keyed' RETURN count(*)",
	} {
		res, err := neo4jdrv.ExecuteQuery(ctx, drv, q, nil, neo4jdrv.EagerResultTransformer, db)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n, _ := res.Records[0].Values[0].(int64); n != 0 {
			t.Errorf("%s: %d left behind", q, n)
		}
	}
}
