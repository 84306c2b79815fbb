package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
	"github.com/memsync/memsync/memsync/recall"
)

// groupToken is how the FTS5 index of search-file schema 2 wrote a group
// in its grp column: "g" and three decimal digits per byte.
func groupToken(group string) string {
	b := make([]byte, 0, 1+3*len(group))
	b = append(b, 'g')
	for i := 0; i < len(group); i++ {
		c := group[i]
		b = append(b, '0'+c/100, '0'+c/10%10, '0'+c%10)
	}
	return string(b)
}

// ftsReference is the FTS5 index the search file held before memsync's own
// (schema 2), built from g's stored memories into a database of its own.
func ftsReference(t *testing.T, g *Graph) *sql.DB {
	t.Helper()
	ctx := context.Background()
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/ref.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE ref USING fts5(text, meta, grp, content = '', tokenize = 'ascii')`); err != nil {
		t.Fatal(err)
	}
	rows, err := g.rdb.QueryContext(ctx, `SELECT id, group_id, record FROM memories ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			id            int64
			group, record string
		)
		if err := rows.Scan(&id, &group, &record); err != nil {
			t.Fatal(err)
		}
		rec, err := journal.Parse([]byte(record))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO ref (rowid, text, meta, grp) VALUES (?1, ?2, ?3, ?4)`, id,
			analysis.Text(rec.Text), analysis.Text(ftsMeta(rec.AllEntities(), rec.Tags)), groupToken(group)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// ftsRanks is every match of terms in groups with its FTS5 bm25 rank, as
// search-file schema 2 asked it.
func ftsRanks(t *testing.T, ref *sql.DB, groups, terms []string) map[int64]float64 {
	t.Helper()
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	var gq, tq []string
	for _, g := range groups {
		gq = append(gq, quote(groupToken(g)))
	}
	for _, term := range terms {
		tq = append(tq, quote(term))
	}
	match := "grp : (" + strings.Join(gq, " OR ") + ") AND {text meta} : (" + strings.Join(tq, " OR ") + ")"
	rows, err := ref.Query(`SELECT rowid, bm25(ref, 1.0, 0.5, 0.0) FROM ref WHERE ref MATCH ?1`, match)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var (
			id   int64
			rank float64
		)
		if err := rows.Scan(&id, &rank); err != nil {
			t.Fatal(err)
		}
		out[id] = rank
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLexicalMatchesFTS5: memsync's own index finds exactly the memories
// FTS5 found for a query within the reader's groups and ranks each with
// the same bm25, to the last bit or two (the idf's logarithm is Go's;
// SQLite's C library rounds the last bit otherwise in about one case in
// seven): over a store of several groups written in
// many batches (so segments merge two levels up), with entity names and
// tags (the meta column, at half weight), texts of stopwords only, and
// memories displaced by another version of their uuid (their postings
// removed).
func TestLexicalMatchesFTS5(t *testing.T) {
	g := openTest(t)
	r := rand.New(rand.NewSource(30))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dq", i)
	}
	word := func() string { return vocab[int(math.Pow(r.Float64(), 3)*float64(len(vocab)))] } // skewed: a few words are common
	agents := []string{"alice", "bob", "carol"}
	text := func() string {
		if r.Intn(40) == 0 {
			return "the of and" // stopwords only: no term
		}
		n := 1 + r.Intn(12)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	sec := 0
	var uuids []string
	for batch := 0; batch < 75; batch++ {
		var ms []memsync.Memory
		for i := 0; i < 1+r.Intn(12); i++ {
			sec++
			agent := agents[r.Intn(len(agents))]
			scope := journal.ScopeShared
			if r.Intn(3) == 0 {
				scope = journal.ScopePrivate
			}
			u := fmt.Sprintf("m%05d", sec)
			uuids = append(uuids, u)
			ms = append(ms, mem(u, sec+1000, text(), func(rec *journal.Record) {
				rec.Agent, rec.Scope = agent, scope
				if r.Intn(4) == 0 {
					rec.Entities = []string{word(), word()}
				}
				if r.Intn(5) == 0 {
					rec.Tags = []string{word()}
				}
			}))
		}
		if batch%10 == 9 {
			// Another version of an earlier uuid, private and earlier in
			// time: it wins (journal.ClashWins) and displaces the stored one.
			k := r.Intn(len(uuids) - len(ms))
			u := uuids[k]
			uuids = slices.Delete(uuids, k, k+1) // displaced once only
			ms = append(ms, mem(u, 0, text()+" "+word(), func(rec *journal.Record) { rec.Scope = journal.ScopePrivate }))
		}
		res := apply(t, g, ms...)
		if batch%10 == 9 && len(res.Displaced) == 0 {
			t.Fatalf("batch %d: nothing displaced", batch)
		}
	}
	ref := ftsReference(t, g)
	var levels int
	if err := g.rdb.QueryRow(`SELECT IFNULL(MAX(level), 0) FROM search.lex_segments`).Scan(&levels); err != nil || levels < 2 {
		t.Fatalf("segments reached level %d (%v), want merges two levels up", levels, err)
	}
	ctx := context.Background()
	for q := 0; q < 200; q++ {
		var groups []string
		switch q % 3 {
		case 0:
			groups = []string{journal.SharedGroup}
		case 1:
			groups = []string{journal.SharedGroup, journal.PrivateGroup(agents[q%len(agents)])}
		default:
			groups = []string{journal.PrivateGroup(agents[q%len(agents)])}
		}
		terms := recall.ParseQuery(strings.Join([]string{word(), word(), word()}[:1+q%3], " ")).Terms
		want := ftsRanks(t, ref, groups, terms)
		gj := fmt.Sprintf("[%q", groups[0])
		for _, x := range groups[1:] {
			gj += fmt.Sprintf(",%q", x)
		}
		visible, err := lexVisible(ctx, g.rdb, gj+"]")
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := lexScores(ctx, g.rdb, visible, terms)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("query %v in %v: %d matches, FTS5 %d", terms, groups, len(got), len(want))
		}
		for _, h := range got {
			w, ok := want[h.id]
			if !ok || math.Abs(w-h.rank) > 4e-16*math.Abs(w) {
				t.Fatalf("query %v in %v: memory %d ranks %v, FTS5 %v (found %v)", terms, groups, h.id, h.rank, w, ok)
			}
		}
	}
	// The figures match too: FTS5's row count and token total.
	var rows, tokens int64
	if err := g.rdb.QueryRow(`SELECT rows, tokens FROM search.lex_stats`).Scan(&rows, &tokens); err != nil {
		t.Fatal(err)
	}
	var stored int64
	if err := g.rdb.QueryRow(`SELECT count(*) FROM memories`).Scan(&stored); err != nil || rows != stored {
		t.Fatalf("index counts %d memories, the store holds %d (%v)", rows, stored, err)
	}
}
