package packet

import (
	"fmt"
	"strings"
)

// MarkdownBudget is the size Markdown keeps a packet under, in bytes: it
// is pasted into a prompt, and each uuid leads to the whole record.
const MarkdownBudget = 4000

// markdownCuts are the lengths, in runes, of item texts and reasons that
// Markdown tries in turn until the packet fits its budget (0: no reason).
var markdownCuts = []struct{ text, why int }{{160, 70}, {120, 60}, {90, 45}, {70, 35}, {50, 25}, {35, 0}, {20, 0}}

// Markdown renders p as a hook pastes it into a prompt: a title line,
// then one headed section per non-empty field, one line per item: its
// text, its uuid (to cite) and kind, and why it was chosen; a packet
// with no item says why it has none. Texts are cut
// (and reasons dropped) as needed to keep the whole under MarkdownBudget;
// uuids are never cut.
func Markdown(p Packet) string {
	var out string
	for _, c := range markdownCuts {
		if out = markdown(p, c.text, c.why); len(out) <= MarkdownBudget {
			break
		}
	}
	return out
}

func markdown(p Packet, textRunes, whyRunes int) string {
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
			fmt.Fprintf(&b, "- %s [%s %s]", text, it.UUID, it.Kind)
			if whyRunes > 0 {
				fmt.Fprintf(&b, " (%s)", oneLine(cutTo(it.Why, whyRunes)))
			}
			b.WriteByte('\n')
		}
	}
	if empty(p) {
		// Say why, rather than a header with nothing under it: Build
		// leaves a packet empty only then (see admit).
		var kinds []string
		for _, c := range Classes {
			if Role(p.Role).Reads(c) {
				kinds = append(kinds, string(c))
			}
		}
		fmt.Fprintf(&b, "\nNothing for this step: of the memories %s may see, none is of the kinds a %s reads (%s), "+
			"none is in the packet's task or session, and none shares a word with the goal (archived and superseded ones are never offered).\n",
			p.Agent, p.Role, strings.Join(kinds, ", "))
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

// empty reports whether p shows no item at all.
func empty(p Packet) bool {
	for _, f := range [][]Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions} {
		if len(f) > 0 {
			return false
		}
	}
	return true
}
