package embedded

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// The edges that carry signals (LINKS_TO, CONFLICTS_WITH, SUPPORTS) are
// derived data, like the full-text rows: the indexer writes them to the
// search file with the memory's postings, in the same transaction, and
// builds them again from the stored records whenever it builds the index
// again. Only Incoming reads them, by target. (Until schema 4 the main
// file held them in its edges table, with an index by target written at
// random places on every batch: about a quarter of a 1M rebuild's time,
// on the writer, which is the projection's critical path.)

// sqlCreateSignals is the search file's signals table: one row per
// (target, type, source) a projected record names, the target as a uuid
// (it may not be projected yet: the signal counts once it lands), the
// source as its memories id.
const sqlCreateSignals = `CREATE TABLE IF NOT EXISTS signals (
		dst  TEXT    NOT NULL,
		type TEXT    NOT NULL,
		src  INTEGER NOT NULL,
		PRIMARY KEY (dst, type, src)
	) WITHOUT ROWID`

// signalsTable writes signals rows: dst, type, src.
var signalsTable = &table{name: "signals", cols: 3, head: `INSERT OR IGNORE INTO signals (dst, type, src)`}

// sqlRemoveSignal deletes one signals row (a replaced memory's).
const sqlRemoveSignal = `DELETE FROM signals WHERE dst = ?1 AND type = ?2 AND src = ?3`

// appendSignals appends to out the signals rows of rec, stored with id.
func appendSignals(out []any, rec *journal.Record, id int64) []any {
	for _, e := range [...]struct {
		typ string
		dst []string
	}{{EdgeLinksTo, rec.Links}, {EdgeConflictsWith, rec.ConflictsWith}, {EdgeSupports, rec.Supports()}} {
		for _, dst := range e.dst {
			out = append(out, dst, e.typ, id)
		}
	}
	return out
}

// sqlIncoming lists the projected records naming any of ?1 through an
// edge that carries a signal.
const sqlIncoming = `SELECT ` + nodeCols + `, s.dst, s.type
	FROM search.signals AS s
	JOIN memories AS m ON m.id = s.src LEFT JOIN superseded AS x ON x.id = m.id
	WHERE s.dst IN (SELECT value FROM json_each(?1))`

// Incoming returns every projected record naming one of uuids through
// LINKS_TO, SUPPORTS or CONFLICTS_WITH, whatever its group. Signals are
// stored by the target's uuid, so one stored before its target counts once
// it lands. Like Search, it waits until the search file holds every memory
// applied so far (a read-only Graph reads what is indexed).
func (g *Graph) Incoming(ctx context.Context, uuids []string) ([]memsync.Reference, error) {
	if len(uuids) == 0 {
		return nil, nil
	}
	ids, err := json.Marshal(uuids)
	if err != nil {
		return nil, fmt.Errorf("embedded: incoming: %w", err)
	}
	if err := g.awaitIndex(ctx); err != nil {
		return nil, err
	}
	rows, err := g.rdb.QueryContext(ctx, sqlIncoming, string(ids))
	if err != nil {
		return nil, g.wrap("incoming", err)
	}
	defer rows.Close()
	var out []memsync.Reference
	for rows.Next() {
		var ref memsync.Reference
		n, err := scanNode(rows, &ref.Target, &ref.Relation)
		if err != nil {
			return nil, g.wrap("incoming", err)
		}
		ref.Source = n
		out = append(out, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, g.wrap("incoming", err)
	}
	return out, nil
}
