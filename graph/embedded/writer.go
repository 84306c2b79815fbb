package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// writer is the one connection that writes, with its prepared statements.
// It is used only with Graph.mu held.
type writer struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt // by SQL text
	bulks map[bulkKey]*sql.Stmt
	// background is set on the search file's writer: its multi-row inserts
	// yield the processor between statements (see yieldEvery).
	background bool
}

// yieldEvery is how many memories the indexer analyzes between yields of
// its processor (runtime.Gosched), and a background writer yields between
// insert statements too. Apply's writer is the critical path of a
// projection: while the indexer and the journal reader keep both cores
// busy, a writer that becomes runnable (after a commit's write calls, a
// wait for the next prepared chunk) can wait up to the scheduler's 10 ms
// time slice for a processor. Yielding this often lets it in within
// microseconds; with nothing waiting a yield returns at once. Measured on the
// 100k rebuild path on two cores (interleaved runs): memsync's CPU time
// in use 80-81 % of both cores' wall without, 88-90 % with.
const yieldEvery = 32

type bulkKey struct {
	t    *table
	rows int
}

// openWriter takes db's connection for writing.
//
// A new file gets PageSize pages and WAL mode first (initFile), and the
// connection lets the WAL grow to walBytes before its COMMIT checkpoints
// it: SQLite counts wal_autocheckpoint in pages, and a file keeps the page
// size it was created with, so the pages are counted from the file's own.
func openWriter(ctx context.Context, db *sql.DB, walBytes int64) (*writer, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var pageSize int64
	err = initFile(ctx, conn)
	if err == nil {
		err = conn.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize)
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, `PRAGMA wal_autocheckpoint = `+strconv.FormatInt(max(1, walBytes/max(1, pageSize)), 10))
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &writer{conn: conn, stmts: map[string]*sql.Stmt{}, bulks: map[bulkKey]*sql.Stmt{}}, nil
}

// stmt returns query prepared on the write connection, preparing it once.
func (w *writer) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	w.stmts[query] = s
	return s, nil
}

func (w *writer) close() error {
	var errs []error
	for _, s := range w.stmts {
		errs = append(errs, s.Close())
	}
	for _, s := range w.bulks {
		errs = append(errs, s.Close())
	}
	errs = append(errs, w.conn.Close())
	return errors.Join(errs...)
}

// table describes a multi-row INSERT: head is everything before VALUES,
// cols the number of values per row.
type table struct {
	name string
	head string
	cols int
}

// maxBulkRows bounds the rows of one INSERT statement (a power of two):
// 128 rows of the widest table stay far below SQLite's 32766 variables.
const maxBulkRows = 128

// insert writes rows (len(args)/t.cols of them, args row after row) with as
// few statements as possible: chunks of maxBulkRows, then the remainder
// split into powers of two, so at most log2(maxBulkRows)+1 statement shapes
// are ever prepared per table.
func (w *writer) insert(ctx context.Context, t *table, args []any) error {
	n := len(args) / t.cols
	for n > 0 {
		k := maxBulkRows
		for k > n {
			k >>= 1
		}
		s, err := w.bulkStmt(ctx, t, k)
		if err != nil {
			return err
		}
		if _, err := s.ExecContext(ctx, args[:k*t.cols]...); err != nil {
			return fmt.Errorf("insert %s: %w", t.name, err)
		}
		if w.background {
			runtime.Gosched()
		}
		args = args[k*t.cols:]
		n -= k
	}
	return nil
}

func (w *writer) bulkStmt(ctx context.Context, t *table, rows int) (*sql.Stmt, error) {
	key := bulkKey{t, rows}
	if s, ok := w.bulks[key]; ok {
		return s, nil
	}
	var b strings.Builder
	b.WriteString(t.head)
	b.WriteString(" VALUES ")
	row := "(" + strings.Repeat("?,", t.cols-1) + "?)"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	s, err := w.conn.PrepareContext(ctx, b.String())
	if err != nil {
		return nil, fmt.Errorf("prepare insert %s: %w", t.name, err)
	}
	w.bulks[key] = s
	return s, nil
}
