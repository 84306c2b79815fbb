package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memsync/memsync/memsync/embed"
)

// tinyLocomo is a LoCoMo-shaped conversation small enough for a test: two
// sessions two days apart, so that at the day-after clock no turn has
// decayed and the command must find what the backends' own search finds.
const tinyLocomo = `[{"sample_id": "tiny",
 "conversation": {"speaker_a": "Caroline", "speaker_b": "Melanie",
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
   {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel, I bought a violin in Vienna last week."},
   {"speaker": "Melanie", "dia_id": "D1:2", "text": "Lovely! I painted a sunrise over the lake with my kids."},
   {"speaker": "Caroline", "dia_id": "D1:3", "text": "I am researching adoption agencies for my family."}],
  "session_2_date_time": "10:37 am on 10 May, 2023",
  "session_2": [
   {"speaker": "Melanie", "dia_id": "D2:1", "text": "We went camping near the redwoods on the weekend.", "blip_caption": "a tent under tall trees"},
   {"speaker": "Caroline", "dia_id": "D2:2", "text": "My violin teacher in Vienna says I improve quickly."}]},
 "qa": [
  {"question": "Where did Caroline buy her violin?", "answer": "Vienna", "evidence": ["D1:1"], "category": 4},
  {"question": "What did Melanie paint with her kids?", "answer": "a sunrise", "evidence": ["D:1:2"], "category": 4},
  {"question": "Where did Melanie go camping?", "answer": "the redwoods", "evidence": ["D2:01"], "category": 2},
  {"question": "What does Caroline say about her violin teacher in Vienna?", "answer": "she improves", "evidence": ["D2:2; D1:1"], "category": 1},
  {"question": "Which agencies is Caroline researching?", "answer": "adoption", "evidence": ["D1:3", "D9:9"], "category": 3},
  {"question": "What did Caroline paint?", "answer": "nothing", "adversarial_answer": "a sunrise", "evidence": ["D1:2"], "category": 5}]
}]`

// TestRecallThroughTheCommand runs the recall figure end to end on a tiny
// conversation: it builds the binaries, makes the repository, and reports
// the command's rows (search and packet, both clocks) beside each door's
// diagnostic and BM25. At the day-after clock nothing has decayed, so the
// command must find every evidence turn the diagnostic finds. (Before
// issue 24 the figure measured only the backends' own search: none of
// these rows existed.) It runs lexical only and with the built-in model
// (--recall-embedder default, issue 27): then every door embeds, and the
// offline door's searches must say their recall is hybrid. Neo4j joins
// when MEMSYNC_NEO4J_URI names a server.
func TestRecallThroughTheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memsync and runs it some sixty times")
	}
	uri := os.Getenv("MEMSYNC_NEO4J_URI")
	if uri == "" && os.Getenv("MEMSYNC_REQUIRE_NEO4J") == "1" {
		t.Fatal("MEMSYNC_REQUIRE_NEO4J=1 but MEMSYNC_NEO4J_URI is empty")
	}
	data := filepath.Join(t.TempDir(), "locomo.json")
	if err := os.WriteFile(data, []byte(tinyLocomo), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, model := range []struct{ spec, note, vectored string }{
		{"none", "Embedder: none (lexical recall only; every command has `--embedder none`)", "0 of 10"},
		{"default", "Embedder: " + embed.Default().Version() + " (every command has `--embedder default`", "10 of 10"},
	} {
		t.Run(model.spec, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"--only", "recall", "--recall-data", data, "--neo4j-uri", uri, "--recall-embedder", model.spec}
			if code := Main(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
			}
			out := stdout.String()
			t.Log(out)
			if !strings.Contains(out, "1 conversation, 5 questions") || !strings.Contains(out, "1 split, 2 repaired, 1 dropped") {
				t.Errorf("questions or evidence repair not reported")
			}
			doors := []string{"embedded", "offline"}
			if uri != "" {
				doors = append(doors, "Neo4j")
			} else if row := recallRow(out, "Neo4j", "`memsync search`", "day after"); len(row) == 0 || !strings.HasPrefix(row[3], "n/a") {
				t.Errorf("Neo4j without a server: row %q, want n/a", row)
			}
			for _, door := range doors {
				diag := "diagnostic: Graph.Search (below the command)"
				if door == "offline" {
					diag = "diagnostic: offline.Search (below the command)"
				}
				d := recallRow(out, door, diag, "–")
				if len(d) < 7 || d[4] != "1.000" {
					t.Errorf("%s diagnostic row %q: want recall@10 1.000", door, d)
				}
				s := recallRow(out, door, "`memsync search`", "day after")
				if len(s) < 9 || s[4] != "1.000" || s[5] != "1.000" || s[8] != "+0.000 / +0.000 ✅" {
					t.Errorf("%s search at the day-after clock: row %q, want recall@10 and hit@10 1.000, level with the diagnostic", door, s)
				}
				for _, r := range []struct{ path, clock string }{
					{"`memsync search`", "today"},
					{"`memsync packet` (planner, every uuid)", "day after"},
					{"`memsync packet` (planner, every uuid)", "today"},
				} {
					if row := recallRow(out, door, r.path, r.clock); len(row) < 7 || strings.HasPrefix(row[3], "n/a") {
						t.Errorf("%s %s at %s: row %q not measured", door, r.path, r.clock, row)
					}
				}
			}
			if row := recallRow(out, "–", "BM25 baseline (same turns, in process)", "–"); len(row) < 7 {
				t.Errorf("no BM25 row")
			}
			wants := []string{"Elapsed:", model.note, "embedded 20 commands", "offline 20 commands", "--neo4j-uri " + offlineURI,
				"embedded " + model.vectored, "offline " + model.vectored, "`memsync search` wall per process"}
			if uri != "" {
				wants = append(wants, "Neo4j "+model.vectored)
			}
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q", want)
				}
			}
		})
	}
}

// recallRow is the cells of the markdown row that starts with door, path
// and clock; nil when there is none.
func recallRow(table, door, path, clock string) []string {
	prefix := "| " + door + " | " + path + " | " + clock + " |"
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, prefix) {
			cells := strings.Split(strings.Trim(line, "|"), " | ")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	return nil
}
