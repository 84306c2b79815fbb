package importer

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// Following a source that changes.
//
// A keyed item (Item.Keyed) keeps its key across edits: a re-import of an
// edited item supersedes what earlier imports wrote for that key
// (makePlan). An item that leaves the source is retired by a removal
// record: a correction that supersedes the item's active records, with
// source.context the item's key and FieldImportRemoved set. Import writes
// one:
//
//   - when the source says the item was deleted (Item.Removed: a Mem0
//     memory in state deleted), always;
//   - when the item belonged to a group the source still holds and is no
//     longer in it (an observation of a Basic Memory note that is still
//     there, or an OpenClaw entry gone from a section still there),
//     always: the note (the section) is the whole of its entries;
//   - with Options.Prune, for every keyed item of the format the source no
//     longer holds (a deleted note, a memory gone from Mem0's get_all): a
//     source is not known to be the whole of what was imported in a
//     format (two projects can be imported into one agent), so only the
//     caller can say it is. A source with parts that could not be parsed
//     is never pruned: an unreadable note is not a deleted one.
//
// Only records of the import's own scope are retired (a private import
// retires private records; SPEC §3: a private record retires only its
// writer's private memories). Formats without keyed items (and the
// unkeyed items of any format) keep the import-what-is-new behaviour.
//
// A Basic Memory observation or an OpenClaw entry is keyed by its place,
// matched to the records of its group by content first (places.go): an
// entry inserted above others writes one record, not a new version of
// every entry below it.

// FieldImportRemoved marks a removal record: true.
const FieldImportRemoved = "import_removed"

// follow says, for a format with keyed items, which source.context values
// of its records are keys (the others are an unkeyed item's file:line)
// and which group a key belongs to ("" for none).
type follow struct {
	keyed func(context string) bool
	group func(key string) string
}

// unkeyedNote is the source.context of an unkeyed Basic Memory item (an
// observation imported before observations had keys): file.md:line.
var unkeyedNote = regexp.MustCompile(`(?i)\.md:\d+$`)

// followed lists the formats whose keyed items are followed.
var followed = map[string]follow{
	"basic-memory": {
		keyed: func(c string) bool { return !unkeyedNote.MatchString(c) },
		group: func(k string) string {
			if i := strings.LastIndexByte(k, '#'); i >= 0 {
				return k[:i]
			}
			return ""
		},
	},
	"openclaw": {
		keyed: func(c string) bool { return !unkeyedNote.MatchString(c) },
		group: func(k string) string {
			if i := strings.LastIndexByte(k, '#'); i >= 0 {
				return k[:i]
			}
			return ""
		},
	},
	"mem0": {
		keyed: func(c string) bool { return strings.HasPrefix(c, "mem0:") },
		group: func(string) string { return "" },
	},
}

// isRemoval says r is a removal record.
func isRemoval(r *journal.Record) bool { return string(r.Extra[FieldImportRemoved]) == "true" }

// retirements plans the removal records of this import: for each key of
// an earlier import that has left the source (removed, out of a group
// still there, or with Prune), one record superseding its active records.
func retirements(opts Options, have *existing, present, groups, gone map[string]bool, rep *Report) []planned {
	f, ok := followed[opts.Format]
	if !ok {
		return nil
	}
	prune := opts.Prune
	if prune && len(rep.Unparsable) > 0 {
		rep.Skipped = append(rep.Skipped, Skip{Source: opts.Path,
			Reason: "--prune not applied: parts of the source could not be parsed, and an unreadable item is not a deleted one"})
		prune = false
	}
	keys := make([]string, 0, len(have.byKey))
	for k := range have.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var plan []planned
	for _, k := range keys {
		if present[k] || !f.keyed(k) {
			continue
		}
		if g := f.group(k); !gone[k] && !prune && (g == "" || !groups[g]) {
			continue
		}
		var olds []string
		var last time.Time
		for _, u := range have.byKey[k] {
			if have.retired[u] || have.removal[u] || have.scope[u] != opts.Scope {
				continue
			}
			olds = append(olds, u)
			if t := have.ts[u]; t.After(last) {
				last = t
			}
		}
		if len(olds) == 0 {
			continue
		}
		sort.Strings(olds)
		ts := opts.Now().UTC().Truncate(time.Second)
		if !ts.After(last) {
			ts = last.Add(time.Second)
		}
		suffix := identity(opts.Format, k, opts.Scope, "removed\x00"+strings.Join(olds, "\x00"))
		r := journal.Record{
			UUID: "mem_" + journal.UUIDTime(ts) + "_" + opts.Agent + "_" + suffix,
			TS:   ts, Agent: opts.Agent, Scope: opts.Scope, Kind: journal.KindCorrection,
			Text:       fmt.Sprintf("Removed from the %s source: %s (what was imported from it is retired).", opts.Format, k),
			Supersedes: olds,
			Source:     &journal.Source{Type: opts.SourceType, Context: k},
			Extra: map[string]json.RawMessage{
				FieldImport:        json.RawMessage(quote(opts.Format)),
				FieldImportRemoved: json.RawMessage("true"),
			},
		}
		if err := r.Validate(); err != nil {
			rep.Unparsable = append(rep.Unparsable, Problem{File: k, Reason: "retire: " + err.Error()})
			continue
		}
		back, err := journal.Parse(r.Canonical())
		if err != nil {
			rep.Unparsable = append(rep.Unparsable, Problem{File: k, Reason: "retire: " + err.Error()})
			continue
		}
		plan = append(plan, planned{rec: back, suffix: suffix, source: k, ok: have.suffixes[suffix] == ""})
	}
	return plan
}
