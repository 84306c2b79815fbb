package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memsync/memsync/graph/embedded/postings"
)

// The full-text index is memsync's own (package postings), in the search
// file: each indexer job adds one segment (the lists of the terms its
// memories hold), and segments merge in eights, level by level, so a term
// has a handful of lists whatever the store's size. Search reads the lists
// of its terms and scores them with FTS5's bm25, to the bit (the store
// used FTS5 before; TestLexicalMatchesFTS5 holds the two side by side).
const (
	// sqlCreateLexGroups numbers the groups: a posting names its memory's
	// group by number, and a search scores the postings of its reader's
	// groups only.
	sqlCreateLexGroups = `CREATE TABLE IF NOT EXISTS lex_groups (
		ord  INTEGER PRIMARY KEY,
		name TEXT    NOT NULL UNIQUE
	)`
	// sqlCreateLexSegments lists the live segments: the ids first..last of
	// the memories they index (segments never overlap) and their level
	// (0 for a job's, k+1 for a merge of eight of level k).
	sqlCreateLexSegments = `CREATE TABLE IF NOT EXISTS lex_segments (
		seg   INTEGER PRIMARY KEY,
		level INTEGER NOT NULL,
		first INTEGER NOT NULL,
		last  INTEGER NOT NULL
	)`
	// sqlCreateLexBlocks holds each segment's lists, packed in blocks
	// (package postings) in term order: first is the block's first term,
	// so the block that may hold a term is the last whose first is not
	// after it. A rowid table (a block is often larger than a page, and an
	// index b-tree would copy large keys into its interior pages).
	sqlCreateLexBlocks = `CREATE TABLE IF NOT EXISTS lex_blocks (
		seg   INTEGER NOT NULL,
		first TEXT    NOT NULL,
		block BLOB    NOT NULL
	)`
	sqlCreateLexBlocksKey = `CREATE UNIQUE INDEX IF NOT EXISTS lex_blocks_key ON lex_blocks (seg, first)`
	// sqlCreateLexStats holds bm25's collection figures: the memories
	// indexed (every group's) and their tokens in all.
	sqlCreateLexStats = `CREATE TABLE IF NOT EXISTS lex_stats (
		one    INTEGER PRIMARY KEY CHECK (one = 1),
		rows   INTEGER NOT NULL,
		tokens INTEGER NOT NULL
	)`
)

// lexEmptyTerm lists, in each segment, the memories that hold no term at
// all (a text of stopwords): no real term is empty, and it is never
// searched. It lets remove tell whether such a memory was indexed.
const lexEmptyTerm = ""

// lexMergeFactor is how many segments of one level merge into one of the next.
const lexMergeFactor = 8

// A block closes once it holds lexBlockSize bytes; a list of lexBigList
// bytes or more has a block of its own, so that a search for a rare term
// does not read a common term's list with it.
const (
	lexBlockSize = 4096
	lexBigList   = 1024
)

var lexBlocksTable = &table{name: "lex_blocks", cols: 3, head: `INSERT INTO lex_blocks (seg, first, block)`}

// sqlLexBlockOf reads, for each live segment, the block that may hold ?1,
// in the order of the segments' ids (they never overlap): a term's lists
// one after the other are its postings in id order.
const sqlLexBlockOf = `SELECT (SELECT b.block FROM search.lex_blocks AS b
		WHERE b.seg = s.seg AND b.first <= ?1 ORDER BY b.first DESC LIMIT 1)
	FROM search.lex_segments AS s ORDER BY s.first`

const (
	sqlLexStatsAdd = `INSERT INTO lex_stats (one, rows, tokens) VALUES (1, ?1, ?2)
		ON CONFLICT (one) DO UPDATE SET rows = rows + excluded.rows, tokens = tokens + excluded.tokens`
	sqlLexNextSeg = `SELECT IFNULL(MAX(seg), 0) + 1 FROM lex_segments`
	sqlLexAddSeg  = `INSERT INTO lex_segments (seg, level, first, last) VALUES (?1, ?2, ?3, ?4)`
)

// lexReset empties the index (a search file of another generation).
var lexReset = []string{`DELETE FROM lex_blocks`, `DELETE FROM lex_segments`, `DELETE FROM lex_stats`, `DELETE FROM lex_groups`}

// lexList is one term's list while a segment is built.
type lexList struct {
	list []byte
	prev int64
	n    int
	// at is the number (lexSegment.seq, from 1) of the last memory added
	// with the term, freq its weight there.
	at   int64
	freq uint32
}

// lexSegment builds one segment from memories in increasing id order.
type lexSegment struct {
	lists        map[string]*lexList
	first, last  int64
	docs, tokens int64
	terms        []*lexList // one memory's distinct terms' lists, reused
	seq          int64      // memories added
}

func newLexSegment() *lexSegment {
	return &lexSegment{lists: map[string]*lexList{}}
}

// add indexes memory id of group ord, whose analyzed text and meta are
// given (terms separated by single spaces). Each occurrence of a term is
// one map lookup; its weight is kept in its own list until the memory's
// postings are appended (a map of one memory's terms besides took a third
// of the time: BenchmarkLexSegmentAdd).
func (s *lexSegment) add(id int64, ord uint32, text, meta string) {
	s.terms = s.terms[:0]
	s.seq++
	term := func(t string, w uint32) {
		l := s.lists[t]
		if l == nil {
			l = &lexList{}
			s.lists[t] = l
		}
		if l.at != s.seq {
			l.at, l.freq = s.seq, 0
			s.terms = append(s.terms, l)
		}
		l.freq += w
	}
	length := eachTerm(text, meta, term)
	if len(s.terms) == 0 {
		term(lexEmptyTerm, 0)
	}
	for _, l := range s.terms {
		l.list = postings.Append(l.list, l.prev, postings.Posting{ID: id, Group: ord, Freq: l.freq, Length: length})
		l.prev = id
		l.n++
	}
	if s.docs == 0 {
		s.first = id
	}
	s.last = id
	s.docs++
	s.tokens += int64(length)
}

// eachTerm calls fn with every term of analyzed text (weight 2) and meta
// (weight 1), in order, and returns the memory's length: its terms and
// one for its group, as FTS5 counted it.
func eachTerm(text, meta string, fn func(t string, w uint32)) uint32 {
	length := uint32(1)
	for _, col := range [...]struct {
		s string
		w uint32
	}{{text, 2}, {meta, 1}} {
		for t := range strings.SplitSeq(col.s, " ") {
			if t != "" {
				fn(t, col.w)
				length++
			}
		}
	}
	return length
}

// lexTerms is the distinct terms of analyzed text and meta, or the empty
// term when they hold none, and the memory's length (as lexSegment.add).
func lexTerms(text, meta string) ([]string, int64) {
	var terms []string
	length := eachTerm(text, meta, func(t string, _ uint32) { terms = append(terms, t) })
	slices.Sort(terms)
	terms = slices.Compact(terms)
	if len(terms) == 0 {
		terms = []string{lexEmptyTerm}
	}
	return terms, int64(length)
}

// lexGroup is the number of group in the search file, numbering it when new.
func (ix *indexer) lexGroup(ctx context.Context, group string) (uint32, error) {
	if ord, ok := ix.ords[group]; ok {
		return ord, nil
	}
	conn := ix.w.conn
	var ord int64
	err := conn.QueryRowContext(ctx, `SELECT ord FROM lex_groups WHERE name = ?1`, group).Scan(&ord)
	if errors.Is(err, sql.ErrNoRows) {
		err = conn.QueryRowContext(ctx, `INSERT INTO lex_groups (ord, name) VALUES ((SELECT IFNULL(MAX(ord), -1) + 1 FROM lex_groups), ?1) RETURNING ord`, group).Scan(&ord)
	}
	if err != nil {
		return 0, fmt.Errorf("number group: %w", err)
	}
	ix.ords[group] = uint32(ord)
	return uint32(ord), nil
}

// blockWriter writes one segment's entries, in term order, as blocks.
type blockWriter struct {
	ix    *indexer
	seg   int64
	block []byte
	first string
	args  []any
	bytes int // of the blocks in args
}

// lexPendingBytes bounds the blocks a blockWriter holds before it inserts
// them: a merge's largest lists (a common term's, hundreds of KB each at
// 1M memories) would otherwise wait 128 at a time, tens of MB.
const lexPendingBytes = 1 << 20

func (b *blockWriter) add(ctx context.Context, e postings.Entry) error {
	big := len(e.List) >= lexBigList
	if big {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	if len(b.block) == 0 {
		b.first = e.Term
	}
	b.block = postings.AppendEntry(b.block, e)
	if big || len(b.block) >= lexBlockSize {
		return b.flush(ctx)
	}
	return nil
}

// flush ends the block; the rows go out 128 at a time, or at 1 MiB of
// blocks, the rest at close.
func (b *blockWriter) flush(ctx context.Context) error {
	if len(b.block) == 0 {
		return nil
	}
	b.args = append(b.args, b.seg, b.first, b.block)
	b.bytes += len(b.block)
	b.block = nil
	if len(b.args) < lexBlocksTable.cols*maxBulkRows && b.bytes < lexPendingBytes {
		return nil
	}
	err := b.ix.w.insert(ctx, lexBlocksTable, b.args)
	clear(b.args) // the blocks are the driver's copies now
	b.args, b.bytes = b.args[:0], 0
	return err
}

func (b *blockWriter) close(ctx context.Context) error {
	if err := b.flush(ctx); err != nil {
		return err
	}
	return b.ix.w.insert(ctx, lexBlocksTable, b.args)
}

// writeSegment stores s as a new segment of level 0, then merges.
func (ix *indexer) writeSegment(ctx context.Context, s *lexSegment) error {
	if s.docs == 0 {
		return nil
	}
	conn := ix.w.conn
	var seg int64
	if err := conn.QueryRowContext(ctx, sqlLexNextSeg).Scan(&seg); err != nil {
		return fmt.Errorf("new segment: %w", err)
	}
	terms := make([]string, 0, len(s.lists))
	for t := range s.lists {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	bw := &blockWriter{ix: ix, seg: seg}
	for _, t := range terms {
		l := s.lists[t]
		if err := bw.add(ctx, postings.Entry{Term: t, N: l.n, Last: l.prev, List: l.list}); err != nil {
			return err
		}
	}
	if err := bw.close(ctx); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, sqlLexAddSeg, seg, 0, s.first, s.last); err != nil {
		return fmt.Errorf("new segment: %w", err)
	}
	if _, err := conn.ExecContext(ctx, sqlLexStatsAdd, s.docs, s.tokens); err != nil {
		return fmt.Errorf("index stats: %w", err)
	}
	return ix.mergeSegments(ctx)
}

// lexSeg is a live segment.
type lexSeg struct {
	seg, first, last int64
}

// mergeSegments merges the segments of each level that holds
// lexMergeFactor of them into one of the next level, lowest level first.
func (ix *indexer) mergeSegments(ctx context.Context) error {
	for level := 0; ; level++ {
		segs, err := ix.segmentsAt(ctx, level)
		if err != nil {
			return err
		}
		if len(segs) < lexMergeFactor {
			return nil
		}
		if err := ix.merge(ctx, segs, level+1); err != nil {
			return fmt.Errorf("merge segments of level %d: %w", level, err)
		}
	}
}

func (ix *indexer) segmentsAt(ctx context.Context, level int) ([]lexSeg, error) {
	rows, err := ix.w.conn.QueryContext(ctx, `SELECT seg, first, last FROM lex_segments WHERE level = ?1 ORDER BY first`, level)
	if err != nil {
		return nil, fmt.Errorf("list segments: %w", err)
	}
	defer rows.Close()
	var out []lexSeg
	for rows.Next() {
		var s lexSeg
		if err := rows.Scan(&s.seg, &s.first, &s.last); err != nil {
			return nil, fmt.Errorf("list segments: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// lexCursor walks one segment's entries in term order.
type lexCursor struct {
	rows *sql.Rows
	br   *postings.BlockReader
	e    postings.Entry
	ok   bool
}

func (c *lexCursor) next() error {
	for {
		if c.br != nil {
			if c.e, c.ok = c.br.Next(); c.ok {
				return nil
			}
			if err := c.br.Err(); err != nil {
				return err
			}
		}
		if !c.rows.Next() {
			c.ok = false
			return c.rows.Err()
		}
		var block []byte
		if err := c.rows.Scan(&block); err != nil {
			return err
		}
		c.br = postings.NewBlockReader(block)
	}
}

// merge writes segs (in id order) as one segment of level, and deletes them.
func (ix *indexer) merge(ctx context.Context, segs []lexSeg, level int) error {
	conn := ix.w.conn
	var seg int64
	if err := conn.QueryRowContext(ctx, sqlLexNextSeg).Scan(&seg); err != nil {
		return err
	}
	curs := make([]*lexCursor, len(segs))
	defer func() {
		for _, c := range curs {
			if c != nil {
				c.rows.Close()
			}
		}
	}()
	for i, s := range segs {
		rows, err := conn.QueryContext(ctx, `SELECT block FROM lex_blocks WHERE seg = ?1 ORDER BY first`, s.seg)
		if err != nil {
			return err
		}
		curs[i] = &lexCursor{rows: rows}
		if err := curs[i].next(); err != nil {
			return err
		}
	}
	bw := &blockWriter{ix: ix, seg: seg}
	var entries []postings.Entry
	for {
		term, found := "", false
		for _, c := range curs {
			if c.ok && (!found || c.e.Term < term) {
				term, found = c.e.Term, true
			}
		}
		if !found {
			break
		}
		entries = entries[:0]
		for _, c := range curs { // in id order: segs are
			if c.ok && c.e.Term == term {
				entries = append(entries, c.e)
				if err := c.next(); err != nil {
					return err
				}
			}
		}
		e, err := postings.Join(term, entries)
		if err != nil {
			return err
		}
		if err := bw.add(ctx, e); err != nil {
			return err
		}
	}
	if err := bw.close(ctx); err != nil {
		return err
	}
	for _, c := range curs {
		c.rows.Close()
	}
	for _, s := range segs {
		for _, q := range []string{`DELETE FROM lex_blocks WHERE seg = ?1`, `DELETE FROM lex_segments WHERE seg = ?1`} {
			if _, err := conn.ExecContext(ctx, q, s.seg); err != nil {
				return err
			}
		}
	}
	_, err := conn.ExecContext(ctx, sqlLexAddSeg, seg, level, segs[0].first, segs[len(segs)-1].last)
	return err
}

// removePostings deletes memory id's postings (its analyzed text and meta
// are given) and takes it out of the collection figures, when the index
// holds it (one built again from the stored records since does not).
func (ix *indexer) removePostings(ctx context.Context, id int64, text, meta string) error {
	conn := ix.w.conn
	var seg int64
	err := conn.QueryRowContext(ctx, `SELECT seg FROM lex_segments WHERE first <= ?1 AND last >= ?1`, id).Scan(&seg)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	terms, length := lexTerms(text, meta)
	for i, t := range terms {
		var (
			rowid int64
			block []byte
		)
		err := conn.QueryRowContext(ctx, `SELECT rowid, block FROM lex_blocks WHERE seg = ?1 AND first <= ?2
			ORDER BY first DESC LIMIT 1`, seg, t).Scan(&rowid, &block)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("term %q: %w", t, err)
		}
		out, ok, err := blockWithout(block, t, id)
		if err != nil {
			return fmt.Errorf("term %q: %w", t, err)
		}
		if !ok {
			if i == 0 {
				return nil // never indexed: its first term's list does not hold it
			}
			return fmt.Errorf("term %q: memory %d indexed under its other terms only", t, id)
		}
		if len(out) == 0 {
			_, err = conn.ExecContext(ctx, `DELETE FROM lex_blocks WHERE rowid = ?1`, rowid)
		} else {
			_, err = conn.ExecContext(ctx, `UPDATE lex_blocks SET block = ?2 WHERE rowid = ?1`, rowid, out)
		}
		if err != nil {
			return fmt.Errorf("term %q: %w", t, err)
		}
	}
	_, err = conn.ExecContext(ctx, sqlLexStatsAdd, -1, -length)
	return err
}

// blockWithout is block with id's posting gone from term's list (and the
// entry gone when that was its last posting), and whether it held one.
func blockWithout(block []byte, term string, id int64) ([]byte, bool, error) {
	var (
		out   []byte
		found bool
	)
	r := postings.NewBlockReader(block)
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		if e.Term == term {
			list, last, held, err := postings.Remove(e.List, id)
			if err != nil {
				return nil, false, err
			}
			if held {
				found = true
				e.List, e.Last = list, last
				e.N--
				if e.N == 0 {
					continue
				}
			}
		}
		out = postings.AppendEntry(out, e)
	}
	return out, found, r.Err()
}

// lexHit is a memory the index matched, with its bm25 rank (lower is better).
type lexHit struct {
	id   int64
	rank float64
}

// lexScores scores every memory of the groups numbered in visible that
// holds any of terms: FTS5's bm25 over the whole collection (every group's
// memories count in the idf and the average length, as they did there),
// each term's part added in the query's order, and the memories indexed
// (bm25's collection size). It reads through q (one read transaction).
func lexScores(ctx context.Context, q querier, visible []uint32, terms []string) ([]lexHit, int64, error) {
	rows, tokens, err := lexStats(ctx, q)
	if err != nil || rows <= 0 {
		return nil, rows, err
	}
	avgdl := float64(tokens) / float64(rows)
	var see []bool // by group number
	for _, o := range visible {
		if int(o) >= len(see) {
			see = append(see, make([]bool, int(o)+1-len(see))...)
		}
		see[o] = true
	}
	var (
		streams []*termStream
		most    int64 // the terms' postings: at least the hits (a large slice's untouched pages cost nothing)
	)
	for _, t := range terms {
		if t == lexEmptyTerm {
			continue
		}
		lists, hits, err := lexLists(ctx, q, t)
		if err != nil {
			return nil, 0, err
		}
		st := &termStream{term: t, idf: postings.IDF(rows, hits), lists: lists, see: see}
		if err := st.next(); err != nil {
			return nil, 0, err
		}
		streams = append(streams, st)
		most += hits
	}
	// The terms' postings merged by id: each memory's parts are added in
	// the query's order, as they come.
	out := make([]lexHit, 0, most)
	for {
		id := int64(-1)
		for _, st := range streams {
			if st.ok && (id < 0 || st.cur.ID < id) {
				id = st.cur.ID
			}
		}
		if id < 0 {
			return out, rows, nil
		}
		var s float64
		for _, st := range streams {
			if st.ok && st.cur.ID == id {
				s += postings.Part(st.idf, st.cur.Freq, st.cur.Length, avgdl)
				if err := st.next(); err != nil {
					return nil, 0, err
				}
			}
		}
		out = append(out, lexHit{id: id, rank: -s})
	}
}

// termStream reads one term's lists, one after the other (in id order:
// sqlLexBlockOf), keeping the postings of the groups see holds.
type termStream struct {
	term  string
	idf   float64
	lists [][]byte
	see   []bool
	r     *postings.Reader
	cur   postings.Posting
	ok    bool // cur is a posting; false at the end
}

// next moves to the term's next visible posting.
func (st *termStream) next() error {
	for {
		if st.r != nil {
			for p, ok := st.r.Next(); ok; p, ok = st.r.Next() {
				if int(p.Group) < len(st.see) && st.see[p.Group] {
					st.cur, st.ok = p, true
					return nil
				}
			}
			if err := st.r.Err(); err != nil {
				st.ok = false
				return fmt.Errorf("term %q: %w", st.term, err)
			}
		}
		if len(st.lists) == 0 {
			st.ok = false
			return nil
		}
		st.r, st.lists = postings.NewReader(st.lists[0]), st.lists[1:]
	}
}

// lexStats is bm25's collection figures: the memories indexed (every
// group's) and their tokens in all.
func lexStats(ctx context.Context, q querier) (rows, tokens int64, err error) {
	rs, err := q.QueryContext(ctx, `SELECT rows, tokens FROM search.lex_stats`)
	if err != nil {
		return 0, 0, err
	}
	defer rs.Close()
	for rs.Next() {
		if err := rs.Scan(&rows, &tokens); err != nil {
			return 0, 0, err
		}
	}
	return rows, tokens, rs.Err()
}

// lexLists reads term's lists, one per live segment holding it, and the
// memories that hold it.
func lexLists(ctx context.Context, q querier, term string) ([][]byte, int64, error) {
	rs, err := q.QueryContext(ctx, sqlLexBlockOf, term)
	if err != nil {
		return nil, 0, err
	}
	defer rs.Close()
	var (
		lists [][]byte
		hits  int64
	)
	for rs.Next() {
		// The block as the driver holds it, valid until the next row: only
		// the term's list is copied out of it.
		var block sql.RawBytes
		if err := rs.Scan(&block); err != nil {
			return nil, 0, err
		}
		e, ok, err := postings.Find(block, term)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			lists = append(lists, slices.Clone(e.List))
			hits += int64(e.N)
		}
	}
	return lists, hits, rs.Err()
}

// lexBest is the fetch best of hits by rank (ties in no order), best first;
// it may reorder hits.
func lexBest(hits []lexHit, fetch int) []lexHit {
	return bestOf(hits, fetch, func(a, b lexHit) bool { return a.rank < b.rank })
}
