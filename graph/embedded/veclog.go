package embedded

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The vector log (search schema 7): the vectors live in a plain file
// beside the search file, appended to by the indexer, not in a table of
// it. A vector is written once and read whole, in id order, by every
// process that loads the vector index (vecIndex), and SQLite's per-row
// and per-page work for 26 MB of rows per 100,000 memories (the write-ahead
// log, its checksums, the checkpoint that copies every page again) was
// about half of what the built-in model cost the projection: 7 of 14 %
// (docs/benchmarks.md). The log is a projection like the rest: derived
// from the stored records, built again whenever it is missing or damaged.
//
// The search file's vec_state row says which log is current and how much
// of it counts:
//
//	epoch    names the file, graph-vectors-<epoch>.log; a new one at every
//	         reset (another model, another generation, a damaged log), and
//	         unique across search files (it starts at the creation time in
//	         nanoseconds), so a key of the vector index file (vecfile.go)
//	         never names two logs
//	version  the model every vector of the log was made by ('' : none yet)
//	bytes    the log's committed length
//
// and vec_gaps lists the ranges of memory ids that have no vector in it
// (memories indexed before a reset, or by a process without an embedder);
// Reembed fills them.
//
// The indexer writes a job's vectors at offset bytes and moves bytes in
// the same transaction of the search file as the job's other rows: a
// reader (which reads bytes in its own snapshot) never reads past what
// was committed, and what a failed or killed transaction wrote past it is
// written over by the next. Each record carries a CRC-32C, so a log that
// lost pages in a power cut is found (Reembed checks it whole at Open,
// and every load checks what it reads) and built again. A memory replaced
// by a later version of its uuid keeps its vector in the log; its id is
// gone from the memories table, and the exact pass, which reads its
// candidates from there, drops it.
//
// A record: uint16 len + group, int64 id, float32 scale, dim int8, then
// uint32 CRC-32C (Castagnoli) of the record's bytes before it; all
// little-endian.
const (
	sqlCreateVecState = `CREATE TABLE IF NOT EXISTS vec_state (
		one     INTEGER PRIMARY KEY CHECK (one = 1),
		epoch   INTEGER NOT NULL,
		version TEXT    NOT NULL,
		bytes   INTEGER NOT NULL)`
	sqlCreateVecGaps = `CREATE TABLE IF NOT EXISTS vec_gaps (
		first INTEGER PRIMARY KEY,
		last  INTEGER NOT NULL)`
	sqlVecState    = `SELECT epoch, version, bytes FROM vec_state`
	sqlSetVecState = `INSERT OR REPLACE INTO vec_state (one, epoch, version, bytes) VALUES (1, ?1, ?2, ?3)`
	sqlVecBytes    = `UPDATE vec_state SET bytes = ?1`
	sqlVecGaps     = `SELECT first, last FROM vec_gaps ORDER BY first`
	sqlAddVecGap   = `INSERT OR REPLACE INTO vec_gaps (first, last) VALUES (?1, ?2)`
)

// vecLogPrefix and vecLogSuffix frame a vector log's name.
const (
	vecLogPrefix = "graph-vectors-"
	vecLogSuffix = ".log"
)

// vecLogPath is the log of epoch beside the search file at search.
func vecLogPath(search string, epoch int64) string {
	return filepath.Join(filepath.Dir(search), vecLogPrefix+strconv.FormatInt(epoch, 10)+vecLogSuffix)
}

// removeVecLogs removes the logs beside the search file at search but
// the one of epoch keep (0: all of them). A log another process still
// reads stays readable to it where the system allows (an open file); a
// removal that fails is left for the next.
func removeVecLogs(search string, keep int64) {
	names, _ := filepath.Glob(filepath.Join(filepath.Dir(search), vecLogPrefix+"*"+vecLogSuffix))
	for _, n := range names {
		if keep != 0 && n == vecLogPath(search, keep) {
			continue
		}
		_ = os.Remove(n)
	}
}

// crcTable is CRC-32C's, which the hardware computes where it can.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// vecRecordSize is the size of a record of dim dimensions whose group
// name is glen bytes long.
func vecRecordSize(glen, dim int) int { return 2 + glen + 8 + 4 + dim + 4 }

// appendVecRecord appends the record of memory id in group with the
// stored vector vec (encodeVector's: scale, then int8) to b.
func appendVecRecord(b []byte, id int64, group string, vec []byte) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(group)))
	b = append(b, group...)
	b = binary.LittleEndian.AppendUint64(b, uint64(id))
	b = append(b, vec...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], crcTable))
}

// errVecLog is a log whose bytes are not the records its state promises.
var errVecLog = errors.New("vector log damaged")

// vecRecord is one record as parseVecRecord reads it: q and the group's
// bytes are b's own; size is the record's, in the log.
type vecRecord struct {
	id    int64
	group []byte
	scale float32
	q     []byte
	size  int
}

// parseVecRecord reads the record of dim dimensions at the start of b and
// returns it and its size; errVecLog when b does not start with a whole,
// intact one.
func parseVecRecord(b []byte, dim int) (vecRecord, int, error) {
	if len(b) < 2 {
		return vecRecord{}, 0, errVecLog
	}
	glen := int(binary.LittleEndian.Uint16(b))
	n := vecRecordSize(glen, dim)
	if len(b) < n {
		return vecRecord{}, 0, errVecLog
	}
	if binary.LittleEndian.Uint32(b[n-4:]) != crc32.Checksum(b[:n-4], crcTable) {
		return vecRecord{}, 0, errVecLog
	}
	at := 2 + glen
	return vecRecord{
		group: b[2:at],
		id:    int64(binary.LittleEndian.Uint64(b[at:])),
		scale: math.Float32frombits(binary.LittleEndian.Uint32(b[at+8:])),
		q:     b[at+12 : n-4],
		size:  n,
	}, n, nil
}

// vecState is the vec_state row.
type vecState struct {
	epoch   int64
	version string
	bytes   int64
}

// vecGap is a range of ids, first to last, with no vector in the log.
type vecGap struct{ first, last int64 }

// vecLog is the indexer's side of the log: the state as read in the
// current transaction, and the file it writes.
type vecLog struct {
	search string // the search file's path
	f      *os.File
	epoch  int64 // f's
	buf    []byte
	// txEpoch is the epoch of the state last read or written in the
	// current transaction; sweep, that a reset in it made the other logs
	// stale: they are removed once it commits (done).
	txEpoch int64
	sweep   bool
}

// done ends a transaction of the search file: once committed, the logs a
// reset in it replaced are removed; after a failure the file is closed
// (the state it was opened for may not hold).
func (l *vecLog) done(committed bool) {
	if committed && l.sweep {
		removeVecLogs(l.search, l.txEpoch)
	}
	if !committed {
		l.close()
	}
	l.sweep = false
}

// state reads vec_state through w (in the indexer's transaction).
func (l *vecLog) state(ctx context.Context, w *writer) (vecState, error) {
	var s vecState
	q, err := w.stmt(ctx, sqlVecState)
	if err == nil {
		err = q.QueryRowContext(ctx).Scan(&s.epoch, &s.version, &s.bytes)
	}
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return s, fmt.Errorf("vector log: read state: %w", err)
	}
	l.txEpoch = s.epoch
	return s, nil
}

// reset starts a new, empty log for version (with its memories 1 to
// through in vec_gaps, to be embedded again; none for through 0) in the
// current transaction, and returns its state. The old log is removed once
// the transaction commits (done).
func (l *vecLog) reset(ctx context.Context, w *writer, old vecState, version string, through int64) (vecState, error) {
	conn := w.conn
	s := vecState{epoch: max(old.epoch+1, time.Now().UnixNano()), version: version}
	for _, q := range []struct {
		q    string
		args []any
	}{
		{sqlSetVecState, []any{s.epoch, s.version, 0}},
		{`DELETE FROM vec_gaps`, nil},
	} {
		if _, err := conn.ExecContext(ctx, q.q, q.args...); err != nil {
			return s, fmt.Errorf("vector log: reset: %w", err)
		}
	}
	if version != "" && through > 0 {
		if _, err := conn.ExecContext(ctx, sqlAddVecGap, 1, through); err != nil {
			return s, fmt.Errorf("vector log: reset: %w", err)
		}
	}
	l.txEpoch, l.sweep = s.epoch, true
	return s, nil
}

// write appends records (whole vecRecords) to the log of s at s.bytes and
// moves bytes, in the current transaction; it returns the new state.
func (l *vecLog) write(ctx context.Context, w *writer, s vecState, records []byte) (vecState, error) {
	if len(records) == 0 {
		return s, nil
	}
	if l.f != nil && l.epoch == s.epoch && !l.holds(s.bytes) {
		l.close() // removed or cut short under the store: opened again below, and found so
	}
	if l.f == nil || l.epoch != s.epoch {
		l.close()
		// A log with committed bytes must be there, and hold them all: one
		// missing or cut short is damaged (errVecLog), never created again
		// with a hole where its records were.
		flags := os.O_RDWR
		if s.bytes == 0 {
			flags |= os.O_CREATE
		}
		f, err := os.OpenFile(vecLogPath(l.search, s.epoch), flags, 0o644)
		if errors.Is(err, os.ErrNotExist) {
			return s, fmt.Errorf("%w: %s is missing", errVecLog, filepath.Base(vecLogPath(l.search, s.epoch)))
		}
		if err != nil {
			return s, fmt.Errorf("vector log: %w", err)
		}
		if fi, err := f.Stat(); err != nil || fi.Size() < s.bytes {
			f.Close()
			return s, fmt.Errorf("%w: %s is shorter than its %d bytes", errVecLog, filepath.Base(vecLogPath(l.search, s.epoch)), s.bytes)
		}
		l.f, l.epoch = f, s.epoch
	}
	if _, err := l.f.WriteAt(records, s.bytes); err != nil {
		return s, fmt.Errorf("vector log: write: %w", err)
	}
	s.bytes += int64(len(records))
	q, err := w.stmt(ctx, sqlVecBytes)
	if err == nil {
		_, err = q.ExecContext(ctx, s.bytes)
	}
	if err != nil {
		return s, fmt.Errorf("vector log: %w", err)
	}
	return s, nil
}

// holds reports whether l.f is still the file at its log's path, with
// at least bytes in it.
func (l *vecLog) holds(bytes int64) bool {
	at, err := os.Stat(vecLogPath(l.search, l.epoch))
	if err != nil {
		return false
	}
	open, err := l.f.Stat()
	return err == nil && os.SameFile(at, open) && open.Size() >= bytes
}

func (l *vecLog) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// gaps reads vec_gaps on q.
func gaps(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string) ([]vecGap, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []vecGap
	for rows.Next() {
		var g vecGap
		if err := rows.Scan(&g.first, &g.last); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// inGaps reports whether id is in one of gs (sorted, disjoint).
func inGaps(gs []vecGap, id int64) bool {
	for _, g := range gs {
		if id < g.first {
			return false
		}
		if id <= g.last {
			return true
		}
	}
	return false
}

// subtractGaps is gs without the ids after..last.
func subtractGaps(gs []vecGap, after, last int64) []vecGap {
	var out []vecGap
	for _, g := range gs {
		if g.last <= after || g.first > last {
			out = append(out, g)
			continue
		}
		if g.first <= after {
			out = append(out, vecGap{g.first, after})
		}
		if g.last > last {
			out = append(out, vecGap{last + 1, g.last})
		}
	}
	return out
}

// setGaps replaces vec_gaps with gs in the current transaction.
func setGaps(ctx context.Context, conn *sql.Conn, gs []vecGap) error {
	if _, err := conn.ExecContext(ctx, `DELETE FROM vec_gaps`); err != nil {
		return err
	}
	for _, g := range gs {
		if _, err := conn.ExecContext(ctx, sqlAddVecGap, g.first, g.last); err != nil {
			return err
		}
	}
	return nil
}

// checkVecLog reads the log of s beside the search file at search and
// returns errVecLog if it is shorter than s.bytes or a record in it is
// damaged (dim: the model's dimensions).
func checkVecLog(search string, s vecState, dim int) error {
	if s.bytes == 0 {
		return nil
	}
	f, err := os.Open(vecLogPath(search, s.epoch))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s is missing", errVecLog, filepath.Base(vecLogPath(search, s.epoch)))
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = readVecLog(f, 0, s.bytes, dim, func(vecRecord) {})
	return err
}

// vecLogChunk is how much of a log readVecLog reads at a time.
const vecLogChunk = 1 << 20

// readVecLog calls fn with each record of f from offset from to to, in
// order, and returns how many it read; errVecLog (with the offset) when
// the bytes there are not whole, intact records. A record's slices are
// valid during the call only.
func readVecLog(f io.ReaderAt, from, to int64, dim int, fn func(vecRecord)) (int, error) {
	buf := make([]byte, 0, vecLogChunk)
	n := 0
	for at := from; at < to; {
		// Keep the tail of the last chunk (a record cut in two) and read on.
		want := min(int64(cap(buf)-len(buf)), to-at-int64(len(buf)))
		if want > 0 {
			k, err := f.ReadAt(buf[len(buf):len(buf)+int(want)], at+int64(len(buf)))
			buf = buf[:len(buf)+k]
			if k < int(want) && err != nil && !errors.Is(err, io.EOF) {
				return n, fmt.Errorf("vector log: read: %w", err)
			}
			if k == 0 {
				return n, fmt.Errorf("%w: it ends at %d, before %d", errVecLog, at+int64(len(buf)), to)
			}
		}
		done := 0
		for done < len(buf) {
			r, size, err := parseVecRecord(buf[done:], dim)
			if err != nil {
				if len(buf)-done >= vecRecordMax(dim) || int64(len(buf)) == to-at {
					return n, fmt.Errorf("%w at offset %d", errVecLog, at+int64(done))
				}
				break // a record cut by the chunk's end
			}
			fn(r)
			n++
			done += size
		}
		at += int64(done)
		buf = append(buf[:0], buf[done:]...)
	}
	return n, nil
}

// vecRecordMax is the size of the largest record of dim dimensions.
func vecRecordMax(dim int) int { return vecRecordSize(math.MaxUint16, dim) }
