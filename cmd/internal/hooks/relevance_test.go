package hooks

import "testing"

// TestPromptRelevance: the threshold a memory must pass to be offered with
// a prompt.
func TestPromptRelevance(t *testing.T) {
	for _, tc := range []struct {
		prompt, memory string
		want           bool
	}{
		{"Tell me a joke about cats", "Use #postgres for the billing service database", false},
		{"Tell me a joke about cats", "The office cat is called Miso", true}, // one of two significant terms (joke, cat) is enough
		{"Which database do we use for the billing service?", "Use #postgres for the billing service database", true},
		{"Which database do we use for the billing service?", "Follow up on the #billing migration with @Mira", false}, // one of three
		{"Which database do we use for the billing service?", "Always write the failing test first", false},
		{"deploying the billing services", "Deploys happen on Tuesdays; the billing service deploys last", true},
		{"cats?", "Our cat knows the deploy schedule", true},
		{"hello, can you help me?", "Always write the failing test first", false}, // no significant term
		{"", "anything", false},
	} {
		got := newPromptRelevance(tc.prompt).relevant(tc.memory)
		if got != tc.want {
			t.Errorf("%q on %q: relevant %v, want %v (terms %v)", tc.prompt, tc.memory, got, tc.want, significantTerms(tc.prompt))
		}
	}
}
