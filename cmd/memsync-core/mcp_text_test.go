package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/journal"
)

// tenHitRepo is a repository where planner has twelve shared memories
// about the billing export, projected.
func tenHitRepo(t *testing.T) string {
	t.Helper()
	repo := newRepo(t, "planner", "critic")
	for i := 0; i < 12; i++ {
		r := journal.Record{TS: time.Now().UTC().Add(-time.Duration(i+1) * time.Hour), Agent: "planner", Kind: journal.KindDecision,
			Scope: journal.ScopeShared, Text: fmt.Sprintf("The billing export runs at %02d:00 UTC so that finance has it by morning", i),
			Why: "finance asked", Tags: []string{"billing"}, Entities: []string{"@Mira"}, Refs: []journal.Ref{{Path: "docs/billing.md"}}}
		if _, err := journal.Append(layout(repo).JournalDir("planner"), &r, journal.AppendOptions{NoSync: true}); err != nil {
			t.Fatal(err)
		}
	}
	syncRepo(t, repo)
	return repo
}

// TestMCPSearchResultSize: a 10-hit search reads as ten short lines (score,
// kind, uuid, text) for the model, with the full search --json document
// as structured content for programs.
func TestMCPSearchResultSize(t *testing.T) {
	s := mcpSession(t, tenHitRepo(t))
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "billing export", "limit": 10}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("search: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	structured, _ := json.Marshal(res.StructuredContent)
	t.Logf("10-hit search: text %d bytes, structuredContent %d bytes", len(text), len(structured))
	// Claude Code hands the model JSON.stringify(structuredContent) when
	// there is some: it must be as free of ranking noise as the text.
	var doc mcpSearchOut
	if err := json.Unmarshal(structured, &doc); err != nil || len(doc.Results) != 10 || len(structured) > 2600 {
		t.Fatalf("structured content, %d bytes: %v %s", len(structured), err, structured)
	}
	for _, noise := range []string{"lexical", "freshness", "factors", `"path"`, `"line"`, "group_id", "CONSTELLATION"} {
		if strings.Contains(string(structured), noise) {
			t.Errorf("structured content holds %s: %s", noise, structured)
		}
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 10 || len(text) > 2000 {
		t.Fatalf("search text, %d bytes in %d lines:\n%s", len(text), len(lines), text)
	}
	for i, l := range lines {
		h := doc.Results[i]
		if !strings.Contains(l, h.UUID) || !strings.Contains(l, h.Text) || !strings.Contains(l, fmt.Sprintf("%.2f", h.Score)) || !strings.Contains(l, "decision") ||
			strings.Contains(l, "lexical") || strings.Contains(l, "docs/billing.md") || strings.Contains(l, "CONSTELLATION") || strings.Contains(l, "active") {
			t.Errorf("line %d: %q", i, l)
		}
	}
}
