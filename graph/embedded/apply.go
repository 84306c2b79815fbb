package embedded

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"modernc.org/sqlite"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// Edge types, as SPEC §4 names the relationships.
const (
	EdgeLinksTo       = "LINKS_TO"
	EdgeSupersedes    = "SUPERSEDES"
	EdgeConflictsWith = "CONFLICTS_WITH"
	EdgeSupports      = "SUPPORTS"
)

// tsLayout is how ts and invalid_at are stored: fixed width, so that text
// order is time order (RFC3339Nano trims trailing zeros and is not).
const tsLayout = "2006-01-02T15:04:05.000000000Z"

func formatTS(t time.Time) string { return t.UTC().Format(tsLayout) }

var (
	memoriesTable = &table{name: "memories", cols: 12, head: `INSERT INTO memories
		(id, uuid, agent, group_id, scope, kind, ts, path, line, hash, record, core)`}
	edgesTable = &table{name: "edges", cols: 3, head: `INSERT OR IGNORE INTO edges (src, type, dst)`}
)

const (
	sqlExisting = `SELECT uuid, hash, scope, ts, id, agent, path, line FROM memories WHERE uuid IN (SELECT value FROM json_each(?1))`
	// Replacing a memory that lost its uuid to another version
	// (journal.ClashWins): its row, its outgoing edges, its waiting
	// supersessions and its own supersession go; its SUPERSEDES targets
	// are recomputed (sqlUnsupersede, then sqlSupersede).
	sqlStoredRecord     = `SELECT record FROM memories WHERE id = ?1`
	sqlRemoveMemory     = `DELETE FROM memories WHERE id = ?1`
	sqlRemoveSuperseded = `DELETE FROM superseded WHERE id = ?1`
	sqlOldTargets       = `SELECT dst FROM edges WHERE src = ?1 AND type = 'SUPERSEDES'`
	sqlRemoveEdges      = `DELETE FROM edges WHERE src = ?1`
	sqlRemoveWaiting    = `DELETE FROM supersede_waiting WHERE src = ?1`
	// sqlUnsupersede forgets the supersession of the memories in ?1 that
	// nothing retires any more (sqlRetires).
	sqlUnsupersede = `DELETE FROM superseded WHERE id IN (
		SELECT m.id FROM memories AS m WHERE m.uuid IN (SELECT value FROM json_each(?1))
		AND NOT EXISTS (SELECT 1 FROM edges AS e JOIN memories AS s ON s.uuid = e.src
			WHERE e.dst = m.uuid AND e.type = 'SUPERSEDES' AND ` + sqlRetires + `))`
	// sqlMaxID is the last id used: ids go on after the memories a Drop
	// deleted (meta id_floor), never naming two memories in one file.
	sqlMaxID = `SELECT MAX(IFNULL((SELECT MAX(id) FROM memories), 0),
		IFNULL((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'id_floor'), 0))`
	sqlAgent = `INSERT INTO agents (name, memories) VALUES (?1, ?2)
		ON CONFLICT (name) DO UPDATE SET memories = memories + excluded.memories`
	// sqlWaitedFor lists the memories of ?1 (new uuids) that projected
	// records already supersede; sqlStopWaiting forgets them as waiting.
	sqlWaitedFor = `SELECT DISTINCT w.dst FROM json_each(?1) AS j JOIN supersede_waiting AS w ON w.dst = j.value`
	// sqlWaitingSome lists up to ?1 distinct waited-for uuids (waitedFor).
	sqlWaitingSome = `SELECT DISTINCT dst FROM supersede_waiting LIMIT ?1`
	sqlStopWaiting = `DELETE FROM supersede_waiting WHERE dst IN (SELECT value FROM json_each(?1))`
	// sqlWait records the SUPERSEDES edges of ?1 ([src, dst] pairs) whose
	// target is not projected, to be resolved when it arrives.
	sqlWait = `INSERT OR IGNORE INTO supersede_waiting (dst, src)
		SELECT j.value ->> 1, j.value ->> 0 FROM json_each(?1) AS j
		WHERE NOT EXISTS (SELECT 1 FROM memories AS m WHERE m.uuid = j.value ->> 1)`
	// sqlSupersede recomputes invalid_at and replaced_by of the projected
	// memories in ?1 that a superseder retires (sqlRetires): the earliest
	// ts, the smallest uuid on a tie (journal.RetiresFirst; it stays an
	// ORDER BY so that one statement retires a whole chunk in SQLite, and
	// ts orders as text because it has a fixed width). The subquery gives
	// both at once as ts, a space and uuid (ts has a fixed width of 30).
	// (MATERIALIZED: otherwise SQLite runs the subquery once per use of k.)
	sqlSupersede = sqlSupersedeHead + `(SELECT value FROM json_each(?1))` + sqlSupersedeTail
	// sqlSupersedeAll is sqlSupersede for every memory a record names in
	// supersedes (after DELETE FROM superseded: reretireOnce).
	sqlSupersedeAll  = sqlSupersedeHead + `(SELECT dst FROM edges WHERE type = 'SUPERSEDES')` + sqlSupersedeTail
	sqlSupersedeHead = `WITH c AS MATERIALIZED (
			SELECT m.id, (SELECT s.ts || ' ' || s.uuid FROM edges AS e JOIN memories AS s ON s.uuid = e.src
				WHERE e.dst = m.uuid AND e.type = 'SUPERSEDES' AND ` + sqlRetires + `
				ORDER BY s.ts, s.uuid LIMIT 1) AS k
			FROM memories AS m WHERE m.uuid IN `
	sqlSupersedeTail = `)
		INSERT OR REPLACE INTO superseded (id, invalid_at, replaced_by)
		SELECT id, substr(k, 1, 30), substr(k, 32) FROM c WHERE k IS NOT NULL`
)

// retireRule names the rule the superseded table follows (journal.Retires:
// SPEC §7, references cross no privacy line). A store whose meta does not
// name it was computed by an earlier rule, under which any superseder
// retired its target; reretireOnce recomputes it when the writer opens.
const retireRule = "journal.Retires/1"

// reretireOnce recomputes every memory's supersession under retireRule,
// once per store (meta retire_rule records it), in one transaction.
func reretireOnce(ctx context.Context, conn *sql.Conn) error {
	var rule string
	err := conn.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'retire_rule'`).Scan(&rule)
	if err == nil && rule == retireRule {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read retire rule: %w", err)
	}
	return inTx(ctx, conn, func() error {
		for _, q := range []string{`DELETE FROM superseded`, sqlSupersedeAll} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("recompute supersession: %w", err)
			}
		}
		if _, err := conn.ExecContext(ctx, sqlSetMeta, "retire_rule", retireRule); err != nil {
			return fmt.Errorf("record retire rule: %w", err)
		}
		return nil
	})
}

// sqlRetires is true when superseder s retires memory m: the store keeps
// every SUPERSEDES edge, and journal.Retires, called through the SQL
// function registered below, decides which take effect (SPEC §7: references
// cross no privacy line).
const sqlRetires = `memsync_retires(s.agent, s.group_id, m.group_id)`

// The SQL function behind sqlRetires, registered once for every connection
// of the "sqlite" driver, as a database/sql driver registers itself.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("memsync_retires", 3, retiresSQL)
}

// retiresSQL is journal.Retires for SQL arguments (agent, source group,
// target group); anything but three strings retires nothing.
func retiresSQL(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	agent, ok1 := args[0].(string)
	src, ok2 := args[1].(string)
	dst, ok3 := args[2].(string)
	return ok1 && ok2 && ok3 && journal.Retires(agent, src, dst), nil
}

// Apply projects batch in one transaction. Records already projected with the
// same hash are skipped. A uuid held (or repeated in the batch) with other
// content is listed in Mismatched, and the store keeps the version
// journal.ClashWins prefers: a record of the batch that wins replaces the
// stored memory (listed in Displaced), with its edges and supersession. A record that fails journal validation can never be stored: Apply
// then writes nothing and returns a *memsync.RecordError naming the first
// such record. Errors that a retry may cure (disk full, database locked,
// I/O) wrap memsync.ErrUnavailable.
func (g *Graph) Apply(ctx context.Context, batch []memsync.Memory) (memsync.ApplyResult, error) {
	var res memsync.ApplyResult
	if len(batch) == 0 {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("embedded: apply batch: %w", err)
	}
	start := time.Now()
	// Deriving what to store (canonical encoding, hash, entities) costs as
	// much as storing it; it runs on other cores, a chunk ahead of the writer.
	p := startPreparing(batch, g.emb)
	defer p.stop()

	g.mu.Lock()
	defer g.mu.Unlock()
	defer g.wrote()
	w, err := g.writerLocked(ctx)
	if err != nil {
		return res, g.wrap("apply batch", err)
	}
	a := &applier{w: w, p: p, held: make(map[string]stored, len(batch)), mismatched: map[string]bool{}}
	err = inTx(ctx, w.conn, func() error {
		seen, err := g.seenLocked(ctx, w)
		if err != nil {
			return err
		}
		a.seen = seen
		return a.run(ctx)
	})
	if err != nil {
		var re *memsync.RecordError
		if errors.As(err, &re) {
			return memsync.ApplyResult{}, err
		}
		g.dropWriterIfBroken(err)
		return memsync.ApplyResult{}, g.wrap("apply batch", err)
	}
	g.ckpt.committed(a.bytes)
	if a.inserted > 0 {
		// Committed: the indexer takes the new memories' full-text rows
		// while the next batch is stored (Search waits for it).
		g.ix.send(ixJob{gen: g.gen, from: a.firstID, through: a.nextID - 1, rows: &a.ix})
	}
	res.Mismatched = a.mismatchedInOrder()
	res.Displaced = a.displaced
	g.lg.Debug("applied batch", zap.Int("records", len(batch)), zap.Int("inserted", a.inserted),
		zap.Int("mismatched", len(res.Mismatched)), zap.Duration("took", time.Since(start)))
	return res, nil
}

// applier writes one batch, chunk after chunk, inside the transaction.
type applier struct {
	w *writer
	p *preparer
	// seen, when set, holds every uuid the store may hold (seen.go): one it
	// has not is new, and not looked up.
	seen *seenFilter

	held       map[string]stored // what the store holds for each uuid of the batch looked at so far
	order      []string          // clashing uuids in order of first clash
	mismatched map[string]bool
	displaced  []memsync.Memory // memories stored before the batch that it replaced
	firstID    int64            // the first id of this batch
	nextID     int64
	inserted   int
	bytes      int64  // of the rows inserted, about
	ix         ixRows // what the inserted memories add to the search file

	agents      map[string]int
	agentOrder  []string
	newIDs      []string    // uuids inserted by this batch
	supersedes  [][2]string // [src, dst] of the SUPERSEDES edges it inserted
	resupersede []string    // uuids whose supersession a replacement may have changed
	fresh       []inserted  // the rows inserted, for the search file
}

// inserted is a row stored under id.
type inserted struct {
	id int64
	r  *row
}

// stored is the version of a uuid the store holds: a row this batch
// inserted, or what lookup found (kept apart: a batch inserts many rows and
// looks few up).
type stored struct {
	id  int64
	r   *row       // inserted by this batch; nil when stored before it
	old *oldStored // found by lookup; nil when inserted by this batch
}

// oldStored is a memory stored before the batch, as lookup read it.
type oldStored struct {
	hash    string
	version journal.Version
	agent   string
	path    string
	line    int
}

func (s stored) hash() string {
	if s.r != nil {
		return s.r.hash
	}
	return s.old.hash
}

func (s stored) version() journal.Version {
	if s.r != nil {
		return journal.VersionOf(&s.r.m.Record, s.r.hash)
	}
	return s.old.version
}

func (s stored) agent() string {
	if s.r != nil {
		return s.r.m.Agent
	}
	return s.old.agent
}

func (a *applier) run(ctx context.Context) error {
	s, err := a.w.stmt(ctx, sqlMaxID)
	if err != nil {
		return err
	}
	if err := s.QueryRowContext(ctx).Scan(&a.nextID); err != nil {
		return fmt.Errorf("next id: %w", err)
	}
	a.nextID++
	a.firstID = a.nextID
	a.agents = map[string]int{}
	for i := range a.p.chunks {
		rows, err := a.p.wait(ctx, i)
		if err != nil {
			return err
		}
		if err := a.chunk(ctx, rows); err != nil {
			return err
		}
	}
	if a.inserted == 0 {
		return nil
	}
	// The search file gets the rows that are still stored: a version that
	// a later chunk of the batch replaced never reaches it.
	a.ix.fts = slices.Grow(a.ix.fts, len(a.fresh))
	for _, f := range a.fresh {
		if a.held[f.r.m.UUID].id == f.id {
			a.ix.add(f.id, f.r)
		}
	}
	s, err = a.w.stmt(ctx, sqlAgent)
	if err != nil {
		return err
	}
	for _, name := range a.agentOrder {
		if _, err := s.ExecContext(ctx, name, a.agents[name]); err != nil {
			return fmt.Errorf("count agent %s: %w", name, err)
		}
	}
	return a.supersession(ctx)
}

// supersession recomputes invalid_at and replaced_by where this batch can
// have changed them: the targets of its SUPERSEDES edges, and its own
// memories that records projected earlier supersede. It runs after every
// record of the batch is stored, so the outcome does not depend on the
// order of the records in it.
func (a *applier) supersession(ctx context.Context) error {
	var candidates []string
	waited, err := a.waitedFor(ctx)
	if err != nil {
		return fmt.Errorf("supersession: %w", err)
	}
	if len(waited) > 0 {
		candidates = append(candidates, waited...)
		if err := a.exec(ctx, sqlStopWaiting, waited); err != nil {
			return fmt.Errorf("supersession: %w", err)
		}
	}
	if len(a.supersedes) > 0 {
		if err := a.exec(ctx, sqlWait, a.supersedes); err != nil {
			return fmt.Errorf("supersession: %w", err)
		}
		for _, p := range a.supersedes {
			candidates = append(candidates, p[1])
		}
	}
	if len(a.resupersede) > 0 {
		if err := a.exec(ctx, sqlUnsupersede, a.resupersede); err != nil {
			return fmt.Errorf("supersession: %w", err)
		}
		candidates = append(candidates, a.resupersede...)
	}
	if len(candidates) == 0 {
		return nil
	}
	if err := a.exec(ctx, sqlSupersede, candidates); err != nil {
		return fmt.Errorf("supersession: %w", err)
	}
	return nil
}

// waitedFor returns the memories this batch inserted that SUPERSEDES edges
// stored before were waiting for. The waiting table holds only edges whose
// target has not arrived, so it is usually far smaller than a bulk batch:
// when it holds at most a quarter of the batch's count it is read whole and
// matched here (a rebuild's batch of 7,000 then reads a few hundred rows
// instead of sending 7,000 uuids as JSON to json_each), else the batch's
// uuids go to SQLite (sqlWaitedFor).
func (a *applier) waitedFor(ctx context.Context) ([]string, error) {
	if most := len(a.newIDs) / 4; most > 0 {
		all, err := a.strings(ctx, sqlWaitingSome, most+1)
		if err != nil {
			return nil, err
		}
		if len(all) <= most {
			var out []string
			for _, dst := range all {
				if st, ok := a.held[dst]; ok && st.r != nil {
					out = append(out, dst) // inserted by this batch
				}
			}
			return out, nil
		}
	}
	newIDs, err := json.Marshal(a.newIDs)
	if err != nil {
		return nil, err
	}
	return a.strings(ctx, sqlWaitedFor, string(newIDs))
}

// exec runs query with arg encoded as JSON as its only parameter.
func (a *applier) exec(ctx context.Context, query string, arg any) error {
	b, err := json.Marshal(arg)
	if err != nil {
		return err
	}
	s, err := a.w.stmt(ctx, query)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(ctx, string(b))
	return err
}

// strings runs query and returns its one text column.
func (a *applier) strings(ctx context.Context, query string, args ...any) ([]string, error) {
	s, err := a.w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// chunk writes the rows of one chunk that are new to the store, or that win
// their uuid over the version it holds (which is then removed first).
func (a *applier) chunk(ctx context.Context, rows []row) error {
	// One version per uuid within the chunk: the one journal.ClashWins prefers.
	pick := make(map[string]int, len(rows))
	var unknown []string
	for i := range rows {
		r := &rows[i]
		j, ok := pick[r.m.UUID]
		if !ok {
			pick[r.m.UUID] = i
			if _, held := a.held[r.m.UUID]; !held && (a.seen == nil || a.seen.mayHold(r.m.UUID)) {
				unknown = append(unknown, r.m.UUID)
			}
			continue
		}
		if o := &rows[j]; o.hash != r.hash {
			a.clash(r.m.UUID)
			if journal.ClashWins(journal.VersionOf(&r.m.Record, r.hash), journal.VersionOf(&o.m.Record, o.hash)) {
				pick[r.m.UUID] = i
			}
		}
	}
	if len(unknown) > 0 {
		existing, err := a.lookup(ctx, unknown)
		if err != nil {
			return err
		}
		for id, st := range existing {
			a.held[id] = st
		}
	}

	memArgs := make([]any, 0, len(pick)*memoriesTable.cols)
	var edgeArgs []any
	for i := range rows {
		r := &rows[i]
		m := r.m
		if pick[m.UUID] != i {
			continue
		}
		if st, ok := a.held[m.UUID]; ok {
			if st.hash() == r.hash {
				continue
			}
			a.clash(m.UUID)
			if !journal.ClashWins(journal.VersionOf(&m.Record, r.hash), st.version()) {
				continue
			}
			if err := a.remove(ctx, m.UUID, st); err != nil {
				return err
			}
		}
		id := a.nextID
		a.nextID++
		a.inserted++
		a.held[m.UUID] = stored{id: id, r: r}
		if a.seen != nil {
			a.seen.add(m.UUID)
		}
		memArgs = append(memArgs, id, m.UUID, m.Agent, r.group, string(m.Scope), string(m.Kind),
			r.ts, m.Path, m.Line, r.hash, r.canon, coreFlag(m.Tier))
		a.fresh = append(a.fresh, inserted{id, r})
		a.bytes += int64(len(r.canon) + len(m.UUID) + len(m.Path) + len(r.group) + len(r.ts) + len(r.hash) + 64)
		// Only SUPERSEDES edges are stored here, for supersession; the
		// others carry signals and go to the search file (ixRows.add).
		for _, dst := range m.Supersedes {
			edgeArgs = append(edgeArgs, m.UUID, EdgeSupersedes, dst)
			a.supersedes = append(a.supersedes, [2]string{m.UUID, dst})
		}
		a.count(m.Agent, 1)
		a.newIDs = append(a.newIDs, m.UUID)
	}
	for _, t := range []struct {
		t    *table
		args []any
	}{
		{memoriesTable, memArgs}, {edgesTable, edgeArgs},
	} {
		if err := a.w.insert(ctx, t.t, t.args); err != nil {
			return err
		}
	}
	return nil
}

// clash notes that uuid is claimed with different content.
func (a *applier) clash(uuid string) {
	if !a.mismatched[uuid] {
		a.mismatched[uuid] = true
		a.order = append(a.order, uuid)
	}
}

// count adds n to agent's memories.
func (a *applier) count(agent string, n int) {
	if _, ok := a.agents[agent]; !ok {
		a.agentOrder = append(a.agentOrder, agent)
	}
	a.agents[agent] += n
}

// remove deletes the memory st that holds uuid, with what it derived: its
// outgoing edges, the supersessions it waited to make and its own; the
// targets it superseded, and uuid itself (whose new version gets a new
// row), have their supersession recomputed at the end of the batch.
func (a *applier) remove(ctx context.Context, uuid string, st stored) error {
	targets, err := a.strings(ctx, sqlOldTargets, uuid)
	if err != nil {
		return fmt.Errorf("replace %s: %w", uuid, err)
	}
	if st.old != nil {
		// What its full-text row holds, for the indexer to delete it.
		rec, err := a.strings(ctx, sqlStoredRecord, st.id)
		if err != nil || len(rec) != 1 {
			return fmt.Errorf("replace %s: read stored record: %v", uuid, err)
		}
		old, err := journal.Parse([]byte(rec[0]))
		if err != nil {
			return fmt.Errorf("replace %s: stored record does not parse: %w", uuid, err)
		}
		ents := old.AllEntities()
		a.ix.removed = append(a.ix.removed, ixRemoval{id: st.id, uuid: uuid, text: old.Text, meta: ftsMeta(ents, old.Tags),
			signals: appendSignals(nil, &old, st.id)})
	}
	for _, q := range []struct {
		sql string
		arg any
	}{{sqlRemoveMemory, st.id}, {sqlRemoveSuperseded, st.id}, {sqlRemoveEdges, uuid}, {sqlRemoveWaiting, uuid}} {
		s, err := a.w.stmt(ctx, q.sql)
		if err != nil {
			return err
		}
		if _, err := s.ExecContext(ctx, q.arg); err != nil {
			return fmt.Errorf("replace %s: %w", uuid, err)
		}
	}
	a.resupersede = append(append(a.resupersede, uuid), targets...)
	a.count(st.agent(), -1)
	if st.old != nil {
		var d memsync.Memory
		d.UUID, d.Agent, d.Path, d.Line = uuid, st.old.agent, st.old.path, st.old.line
		a.displaced = append(a.displaced, d)
	}
	return nil
}

// lookup returns what the store holds for each of ids that is projected.
func (a *applier) lookup(ctx context.Context, ids []string) (map[string]stored, error) {
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	s, err := a.w.stmt(ctx, sqlExisting)
	if err != nil {
		return nil, err
	}
	q, err := s.QueryContext(ctx, string(idsJSON))
	if err != nil {
		return nil, fmt.Errorf("look up uuids: %w", err)
	}
	defer q.Close()
	existing := map[string]stored{}
	for q.Next() {
		var (
			id, scope, ts string
			old           oldStored
			st            = stored{old: &old}
		)
		if err := q.Scan(&id, &old.hash, &scope, &ts, &st.id, &old.agent, &old.path, &old.line); err != nil {
			return nil, fmt.Errorf("look up uuids: %w", err)
		}
		t, err := time.Parse(tsLayout, ts)
		if err != nil {
			return nil, fmt.Errorf("look up uuids: %s: ts: %w", id, err)
		}
		old.version = journal.Version{Scope: journal.Scope(scope), TS: t, Hash: old.hash}
		existing[id] = st
	}
	if err := q.Err(); err != nil {
		return nil, fmt.Errorf("look up uuids: %w", err)
	}
	return existing, nil
}

// mismatchedInOrder lists the mismatched uuids in order of first appearance.
func (a *applier) mismatchedInOrder() []string {
	if len(a.mismatched) == 0 {
		return nil
	}
	var out []string
	for _, id := range a.order {
		if a.mismatched[id] {
			out = append(out, id)
		}
	}
	return out
}

// row is a record ready to be written.
type row struct {
	m        *memsync.Memory
	canon    string
	hash     string
	group    string
	ts       string
	entities []string
	meta     string // its entity names and tags
	vec      []byte // its embedding as stored (encodeVector); nil without an embedder
	version  any    // the embedder's Version (a string) when vec is set
}

// prepareRow validates m and derives what will be stored.
func prepareRow(m *memsync.Memory) (row, error) {
	if err := storable(&m.Record); err != nil {
		return row{}, &memsync.RecordError{UUID: m.UUID, Err: fmt.Errorf("embedded: %w", err)}
	}
	canon, hash := m.CanonicalHash()
	ents := m.Record.AllEntities()
	group := m.Record.GroupID()
	return row{
		m:        m,
		canon:    canon,
		hash:     hash,
		group:    group,
		ts:       formatTS(m.TS),
		entities: ents,
		meta:     ftsMeta(ents, m.Tags),
	}, nil
}

// storable reports why a record could never be stored faithfully: without a
// uuid it has no identity, and what fails validation (or is not UTF-8)
// would not come back from its canonical encoding as it went in.
func storable(r *journal.Record) error {
	if r.UUID == "" {
		return errors.New("record has no uuid")
	}
	if err := r.Validate(); err != nil {
		return err
	}
	if !utf8.ValidString(r.Text) {
		return &journal.FieldError{Field: "text", Reason: "not valid UTF-8"}
	}
	for _, e := range r.Entities {
		if !utf8.ValidString(e) {
			return &journal.FieldError{Field: "entities", Reason: "not valid UTF-8"}
		}
	}
	return nil
}

// ftsMeta is the second indexed column (before analysis): entity names and tags.
func ftsMeta(entities, tags []string) string {
	if len(tags) == 0 {
		return strings.Join(entities, " ")
	}
	return strings.Join(entities, " ") + " " + strings.Join(tags, " ")
}

// Drop deletes every memory, edge, entity and agent, leaving an empty store
// with its schema.
func (g *Graph) Drop(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	w, err := g.writerLocked(ctx)
	if err != nil {
		return g.wrap("drop", err)
	}
	gen := newGeneration()
	var last int64
	err = inTx(ctx, w.conn, func() error {
		s, err := w.stmt(ctx, sqlMaxID)
		if err != nil {
			return err
		}
		if err := s.QueryRowContext(ctx).Scan(&last); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM memories`, `DELETE FROM edges`, `DELETE FROM agents`,
			`DELETE FROM supersede_waiting`, `DELETE FROM superseded`,
		} {
			if _, err := w.conn.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		for _, kv := range [][2]any{{"generation", gen}, {"id_floor", last}} {
			if _, err := w.conn.ExecContext(ctx, sqlSetMeta, kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.dropWriterIfBroken(err)
		return g.wrap("drop", err)
	}
	g.gen = gen
	g.seen, g.seenCheck = nil, true
	// The search file empties itself when it meets the new generation.
	g.ix.send(ixJob{gen: gen, through: last})
	g.lg.Info("embedded graph dropped")
	return nil
}
