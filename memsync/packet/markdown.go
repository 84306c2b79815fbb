package packet

import (
	"fmt"
	"strings"
)

// MarkdownBudget is the size Markdown keeps a packet under, in bytes: it
// is pasted into a prompt, and each uuid leads to the whole record.
const MarkdownBudget = 4000

// markdownTexts are the item text lengths, in runes, that Markdown tries
// in turn until the packet fits its budget.
var markdownTexts = []int{160, 120, 90, 70, 50, 35}

// Markdown renders p as a hook pastes it into a prompt: a title line,
// then one headed section per non-empty field, one line per item: its
// text, its uuid (to cite) and kind, and why it was chosen. Texts are cut
// as short as needed (down to 35 runes) to keep the whole under
// MarkdownBudget.
func Markdown(p Packet) string {
	var out string
	for _, n := range markdownTexts {
		if out = markdown(p, n); len(out) <= MarkdownBudget {
			break
		}
	}
	return out
}

func markdown(p Packet, textRunes int) string {
	whyRunes := min(textRunes/2, 70)
	var b strings.Builder
	fmt.Fprintf(&b, "# Working memory: %s for %s\n", p.Role, p.Agent)
	fmt.Fprintf(&b, "Goal: %s\n", oneLine(cutTo(p.Goal, textRunes)))
	if p.Task != "" || p.Session != "" {
		fmt.Fprintf(&b, "Scope:%s%s\n", prefixed(" task ", cutTo(p.Task, textRunes)), prefixed(" session ", cutTo(p.Session, textRunes)))
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
			text := oneLine(cutTo(it.Text, textRunes))
			if it.UUID == "" {
				fmt.Fprintf(&b, "- %s\n", text)
				continue
			}
			fmt.Fprintf(&b, "- %s [%s %s] (%s)\n", text, it.UUID, it.Kind, oneLine(cutTo(it.Why, whyRunes)))
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
