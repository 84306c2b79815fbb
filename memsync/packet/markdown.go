package packet

import (
	"fmt"
	"strings"
)

// MarkdownText is how many runes of an item's text Markdown keeps: the
// packet is pasted into a prompt, and the uuid leads to the whole record.
const MarkdownText = 140

// Markdown renders p as a hook pastes it into a prompt: a title line,
// then one headed section per non-empty field, one line per item with its
// uuid (to cite), kind, agent and day, then why it was chosen. With every
// field at its cap it stays under 4 KB.
func Markdown(p Packet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Working memory: %s for %s\n", p.Role, p.Agent)
	fmt.Fprintf(&b, "Goal: %s\n", oneLine(cutTo(p.Goal, 200)))
	if p.Task != "" || p.Session != "" {
		fmt.Fprintf(&b, "Scope:%s%s\n", prefixed(" task ", p.Task), prefixed(" session ", p.Session))
	}
	asOf := "As of " + p.AsOf
	if p.Offline {
		asOf += " (offline: from the journals)"
	}
	b.WriteString(asOf + "\n")
	for _, s := range []struct {
		title string
		items []Item
	}{
		{"Core", p.Core},
		{"Hard constraints", p.HardConstraints},
		{"Procedures to follow", p.ProceduresToFollow},
		{"Pitfalls to avoid", p.PitfallsToAvoid},
		{"Relevant facts", p.RelevantFacts},
		{"Open questions", p.OpenQuestions},
	} {
		if len(s.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n", s.title)
		for _, it := range s.items {
			text := oneLine(cutTo(it.Text, MarkdownText))
			if it.UUID == "" {
				fmt.Fprintf(&b, "- %s\n", text)
				continue
			}
			day := it.TS
			if len(day) >= 10 {
				day = day[:10]
			}
			fmt.Fprintf(&b, "- %s [%s %s %s %s] (%s)\n", text, it.UUID, it.Kind, it.Agent, day, cutTo(it.Why, 90))
		}
	}
	if len(p.SelectedMemoryIDs) > 0 {
		fmt.Fprintf(&b, "\nSelected: %s\n", strings.Join(p.SelectedMemoryIDs, " "))
	}
	return b.String()
}

func prefixed(prefix, v string) string {
	if v == "" {
		return ""
	}
	return prefix + oneLine(v)
}

// oneLine folds whitespace runs (newlines included) into single spaces, so
// a memory's text never breaks the markdown's structure.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
