package mcpserver

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/memsync/surprise"
)

// The texts the MCP tools answer with: what a model reads, short and
// plain. The full JSON document goes beside it as structured content.

// textResult is a tool result whose content is text (the SDK adds the
// structured content).
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// oneLine is s with every run of white space (newlines included) made one
// space, so that a memory is one line of a list.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// searchText is one line per hit: score, kind, status when not active
// (and what replaced a superseded one), uuid, text.
func searchText(res mcpSearchOut) string {
	var b strings.Builder
	if res.Offline {
		fmt.Fprintf(&b, "(offline: the graph is down, answered from the journals: %s)\n", oneLine(res.Reason))
	}
	if len(res.Results) == 0 {
		b.WriteString("No memories match.")
		return b.String()
	}
	for _, h := range res.Results {
		fmt.Fprintf(&b, "%.2f %s", h.Score, h.Kind)
		switch {
		case h.Status == "superseded" && h.ReplacedBy != "":
			fmt.Fprintf(&b, " [superseded by %s]", h.ReplacedBy)
		case h.Status != "" && h.Status != "active":
			fmt.Fprintf(&b, " [%s]", h.Status)
		}
		fmt.Fprintf(&b, " %s: %s\n", h.UUID, oneLine(h.Text))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// rememberText says what remember did: the uuid written, or, when the
// surprise gate kept the memory out, that nothing was written and why.
func rememberText(res rememberOut) string {
	if res.Skipped {
		score := 0.0
		if res.Surprise != nil {
			score = *res.Surprise
		}
		return fmt.Sprintf("skipped: surprise %.2f is below %.2f (%s); nothing written. "+
			"A learning-tier memory must add something new; tier working stores it regardless.",
			score, surprise.LowAt, res.Reason)
	}
	return fmt.Sprintf("Remembered as %s (%s).", res.UUID, res.Path)
}

// explainText is explain's answer in a few lines.
func explainText(res cmdline.ExplainResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s by %s): importance %.2f, confidence %.2f, status %s", res.UUID, res.Kind, res.Agent,
		res.Importance, res.Confidence, res.Status)
	if res.ReplacedBy != "" {
		fmt.Fprintf(&b, " (replaced by %s)", res.ReplacedBy)
	}
	if res.Tier != "" {
		fmt.Fprintf(&b, ", tier %s", res.Tier)
	}
	if res.MaxAge != "" {
		fmt.Fprintf(&b, ", max_age %s", res.MaxAge)
	}
	fmt.Fprintf(&b, "\n%s", oneLine(res.Text))
	if len(res.Basis) > 0 {
		fmt.Fprintf(&b, "\nconfidence basis: %s", strings.Join(res.Basis, "; "))
	}
	for _, e := range res.Events {
		fmt.Fprintf(&b, "\n- %s %s %s: %s", e.TS, e.Kind, e.UUID, e.Effect)
	}
	return b.String()
}

// statusText is status's answer in one line.
func statusText(out statusOut) string {
	g := "reachable"
	if !out.Graph.Reachable {
		g = "unreachable"
		if out.Graph.Error != "" {
			g += " (" + oneLine(out.Graph.Error) + ")"
		}
	}
	a := out.Agent
	s := fmt.Sprintf("graph %s %s; %s: %d journal records, %d projected, outbox %d, rejects %d, lag %.0fs",
		out.Graph.Backend, g, a.Agent, a.JournalRecords, a.Projected, a.Outbox, a.Rejects, a.LagSeconds)
	if a.Problem != "" {
		s += "; problem: " + oneLine(a.Problem)
	}
	return s
}
