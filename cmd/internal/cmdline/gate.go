package cmdline

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/surprise"
)

// gateVerdict is what the surprise gate (SPEC §9) made of a record about
// to be appended.
type gateVerdict struct {
	res  surprise.Result
	skip bool // not written
}

// applyGate runs SPEC §9's surprise gate on rec before it is written: a
// learning-tier record is scored against the agent's recent records, the
// score goes into rec (surprise), a score in 0.4–0.7 makes it confidence
// low, and below 0.4 it is skipped unless force. Other tiers pass
// untouched. With an embedder (emb not nil), novelty compares the
// records' vectors too (surprise.Embedder). A journal that cannot be read
// does not stop the write: the record is kept, unscored, and the fault
// named on warn.
func applyGate(repo string, rec *journal.Record, emb Embedder, force bool, warn func(format string, args ...any)) gateVerdict {
	if !surprise.Gated(rec) {
		return gateVerdict{}
	}
	var vectors surprise.Embedder
	if emb != nil {
		vectors = emb
	}
	// The index is host-local and rebuilt from the journals whenever it
	// does not match them (.memsync/ is memsync.Layout.LocalDir, which
	// this package cannot link).
	x, err := surprise.LoadVectors(filepath.Join(repo, journalDir(rec.Agent)),
		filepath.Join(repo, ".memsync", "surprise", rec.Agent+".idx"), surprise.DefaultRecent, vectors)
	if err != nil {
		warn("surprise gate: %v; appending unscored", err)
		return gateVerdict{}
	}
	res := x.Score(rec)
	x.Close()
	if rec.Extra == nil {
		rec.Extra = map[string]json.RawMessage{}
	}
	rec.Extra["surprise"] = json.RawMessage(strconv.FormatFloat(res.Score, 'f', -1, 64))
	if res.Decision == surprise.StoreLow {
		rec.Confidence = "low"
	}
	return gateVerdict{res: res, skip: res.Decision == surprise.Skip && !force}
}

// skippedText is the line append prints for a record the gate kept out.
func (v gateVerdict) skippedText() string {
	return fmt.Sprintf("skipped: surprise %.2f is below %.2f (%s); nothing written (--force writes it anyway)",
		v.res.Score, surprise.LowAt, v.res.Reason)
}
