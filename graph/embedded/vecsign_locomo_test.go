package embedded

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
)

// TestSignCodesRecallLoCoMo: recall@10 of Graph.Search's final hybrid top
// 10 through the sign codes against the same search scoring every
// vector, on real text: every turn of the LoCoMo dev conversations (read
// from MEMSYNC_LOCOMO, never copied into the repository) as one store
// with the built-in model, each non-adversarial question a query. The
// store is small (2,760 turns), so the budget is a share of it: a fifth
// must keep recall@10 ≥ 0.95 (measured 0.97; a tenth, logged, 0.92: real
// conversation clusters less than the harness's corpus, whose recall at
// 1M the harness measures). Skipped without the data.
func TestSignCodesRecallLoCoMo(t *testing.T) {
	path := os.Getenv("MEMSYNC_LOCOMO")
	if path == "" {
		t.Skip("no LoCoMo data: set MEMSYNC_LOCOMO to locomo-dev.json (e.g. /work/shared/eval/locomo-dev/locomo-dev.json) to run it")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var convs []struct {
		QA []struct {
			Question string `json:"question"`
			Category int    `json:"category"`
		} `json:"qa"`
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &convs); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	g := approxStore(t, embed.Default(), math.MaxInt, 0)
	var batch []memsync.Memory
	var questions []string
	for ci, c := range convs {
		for s := 1; ; s++ {
			v, ok := c.Conversation[fmt.Sprintf("session_%d", s)]
			if !ok {
				break
			}
			var turns []struct {
				Speaker, Text string
				Caption       string `json:"blip_caption"`
			}
			if err := json.Unmarshal(v, &turns); err != nil {
				t.Fatalf("conversation %d session %d: %v", ci, s, err)
			}
			for _, tu := range turns {
				text := tu.Speaker + ": " + tu.Text
				if tu.Caption != "" {
					text += " [image: " + tu.Caption + "]"
				}
				batch = append(batch, mem(fmt.Sprintf("c%d-t%05d", ci, len(batch)), len(batch), text))
			}
		}
		for _, q := range c.QA {
			if q.Category != 5 && strings.TrimSpace(q.Question) != "" {
				questions = append(questions, q.Question)
			}
		}
	}
	apply(t, g, batch...)
	n := len(batch)
	exact := make([][]string, len(questions))
	for i, q := range questions {
		for _, h := range search(t, g, q) {
			exact[i] = append(exact[i], h.UUID)
		}
	}
	for _, budget := range []int{n / 10, n / 5} {
		g.SetVectorSearch(1, budget)
		hit, total := 0, 0
		for i, q := range questions {
			want := map[string]bool{}
			for _, u := range exact[i] {
				want[u] = true
			}
			total += len(want)
			for _, h := range search(t, g, q) {
				if want[h.UUID] {
					hit++
				}
			}
		}
		r := float64(hit) / float64(max(total, 1))
		t.Logf("%d turns, %d questions, budget %d: recall@10 of the hybrid top 10 against every vector %.3f", n, len(questions), budget, r)
		if budget == n/5 && r < 0.95 {
			t.Errorf("budget %d: recall@10 %.3f, want ≥ 0.95", budget, r)
		}
	}
}
