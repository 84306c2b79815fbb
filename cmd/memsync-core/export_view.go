package main

import (
	"bufio"
	"context"
	"io"
	"slices"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// exportChunk is how many memories of the view are scored at once: the
// export holds that many records parsed, never the whole view.
const exportChunk = 512

// exportView writes the markdown or mcp-memory export of agent's view:
// the memories it may see, oldest first, without what search leaves out
// by default (superseded memories, memories flagged wrong: the scoring
// rule of read.ScoreNodes, over the offline path's records) and
// memsync's own records (feedback, promotions, compaction). Memory holds
// an index of the journals (where each record is, and which records name
// which), not the records (issue 51 §6): they are scored a chunk at a
// time and read again from their lines to be written.
func exportView(ctx context.Context, repo, agent, format string, now time.Time, w io.Writer) error {
	ix, err := readExportIndex(ctx, repo)
	if err != nil {
		return err
	}
	defer ix.close()
	if err := ix.indexNames(); err != nil {
		return err
	}
	groups := journal.ReaderGroups(agent)
	view := ix.view(agent)
	// Which memories of the view are exported, a chunk at a time.
	kept := view[:0]
	clock := memsync.Present(now)
	for start := 0; start < len(view); start += exportChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk := view[start:min(start+exportChunk, len(view))]
		nodes := make([]memsync.Node, 0, len(chunk))
		for _, i := range chunk {
			n, err := ix.node(i)
			if err != nil {
				return err
			}
			nodes = append(nodes, n)
		}
		scored, err := read.ScoreNodes(ctx, ix, nodes, groups, clock)
		if err != nil {
			return err
		}
		for k, i := range chunk {
			switch nodes[k].Record.Kind {
			case journal.KindFeedback, journal.KindPromotion, journal.KindCompaction:
				continue
			}
			if s, ok := scored[nodes[k].UUID]; ok && !s.Result.Retired() {
				kept = append(kept, i) // never ahead of the chunk it reads
			}
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	switch format {
	case "markdown":
		err = ix.writeMarkdown(ctx, bw, agent, kept)
	default:
		err = ix.writeMCP(ctx, bw, kept)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// writeMarkdown writes the markdown export of the entries kept: a section
// per kind, each a pass over them.
func (ix *exportIndex) writeMarkdown(ctx context.Context, w *bufio.Writer, agent string, kept []int32) error {
	importer.WriteMarkdownHeader(w, agent, len(kept))
	kinds := make([]int8, len(kept)) // the index in journal.Kinds of each, read once (-1: another)
	for k, i := range kept {
		rec, err := ix.record(ix.entries[i])
		if err != nil {
			return err
		}
		kinds[k] = int8(slices.Index(journal.Kinds, rec.Kind))
	}
	for ki, kind := range journal.Kinds {
		first := true
		for k, i := range kept {
			if int(kinds[k]) != ki {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := ix.record(ix.entries[i])
			if err != nil {
				return err
			}
			if first {
				importer.WriteMarkdownSection(w, kind)
				first = false
			}
			importer.WriteMarkdownItem(w, &rec)
		}
	}
	return nil
}

// writeMCP writes the mcp-memory export of the entries kept: each entity
// (a record's first entity, else its uuid) in the order of its first
// memory, its type importer.MCPEntityType of that memory, its memories'
// texts as its observations; then, in the order of the memories, each
// relation once: a memory imported from a relation as that relation, and
// each link between two exported memories of different entities.
func (ix *exportIndex) writeMCP(ctx context.Context, w *bufio.Writer, kept []int32) error {
	entityOf := make([]int32, len(ix.entries)) // entry → its entity's number + 1; 0: not exported
	var names, types []string                  // each entity's name and the kind of its first memory
	var members [][]int32                      // each entity's entries, oldest first
	number := map[string]int32{}
	isRelation := make([]bool, len(ix.entries)) // entry → a memory imported from a relation
	for _, i := range kept {
		rec, err := ix.record(ix.entries[i])
		if err != nil {
			return err
		}
		if _, ok := importer.MCPRelationOf(&rec); ok {
			isRelation[i] = true
			continue
		}
		name := importer.MCPEntityName(&rec)
		e, ok := number[name]
		if !ok {
			e = int32(len(names))
			number[name] = e
			names, types, members = append(names, name), append(types, importer.MCPEntityType(&rec)), append(members, nil)
		}
		entityOf[i] = e + 1
		members[e] = append(members[e], i)
	}
	number = nil
	for e, name := range names {
		err := importer.WriteMCPEntity(w, name, types[e], func(yield func(string) error) error {
			for _, i := range members[e] {
				if err := ctx.Err(); err != nil {
					return err
				}
				rec, err := ix.record(ix.entries[i])
				if err != nil {
					return err
				}
				if err := yield(rec.Text); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		members[e] = nil
	}
	seen := map[importer.MCPRelation]bool{}
	emit := func(rel importer.MCPRelation) error {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		return importer.WriteMCPRelationOf(w, rel)
	}
	for _, i := range kept {
		if !ix.entries[i].names && !isRelation[i] {
			continue
		}
		rec, err := ix.record(ix.entries[i])
		if err != nil {
			return err
		}
		if isRelation[i] {
			rel, _ := importer.MCPRelationOf(&rec)
			if err := emit(rel); err != nil {
				return err
			}
			continue
		}
		from := entityOf[i]
		for _, l := range rec.Links {
			j, ok := ix.byUUID[l]
			if !ok || entityOf[j] == 0 || entityOf[j] == from {
				continue
			}
			if err := emit(importer.MCPRelation{From: names[from-1], To: names[entityOf[j]-1], RelationType: "links_to"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexNames builds ix.named: for each uuid, the entries (in reading
// order) whose records name it, through links, supports, conflicts_with
// or supersedes. Only the records that name something are read again.
func (ix *exportIndex) indexNames() error {
	ix.named = map[string][]int32{}
	for i, e := range ix.entries {
		if !e.names {
			continue
		}
		rec, err := ix.record(e)
		if err != nil {
			return err
		}
		for _, ids := range [][]string{rec.Links, rec.Supports(), rec.ConflictsWith, rec.Supersedes} {
			for _, id := range ids {
				if l := ix.named[id]; len(l) == 0 || l[len(l)-1] != int32(i) {
					ix.named[id] = append(l, int32(i))
				}
			}
		}
	}
	return nil
}

// node is entry i's memory as the offline path derives it: completed,
// its supersession from every record naming it (memsync.Retire).
func (ix *exportIndex) node(i int32) (memsync.Node, error) {
	n, err := ix.plainNode(i)
	if err != nil {
		return n, err
	}
	for _, s := range ix.named[n.UUID] {
		src, err := ix.record(ix.entries[s])
		if err != nil {
			return n, err
		}
		if slices.Contains(src.Supersedes, n.UUID) {
			memsync.Retire(&n, &src)
		}
	}
	return n, nil
}

// plainNode is entry i's memory, completed as the offline path does
// (offline.complete), without its supersession.
func (ix *exportIndex) plainNode(i int32) (memsync.Node, error) {
	rec, err := ix.record(ix.entries[i])
	if err != nil {
		return memsync.Node{}, err
	}
	n := memsync.Node{Memory: memsync.Memory{Record: rec, Path: ix.l.Rel(ix.files[ix.entries[i].file])}}
	n.Hash = rec.Hash()
	n.GroupID = rec.GroupID()
	n.Importance = 0.5
	n.LinksTo = sortedUnique(rec.Links)
	n.Supersedes = sortedUnique(rec.Supersedes)
	n.ConflictsWith = sortedUnique(rec.ConflictsWith)
	n.Mentions = sortedUnique(rec.AllEntities())
	return n, nil
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

var _ memsync.SignalReader = (*exportIndex)(nil)

// Get is memsync.SignalReader's: the memories of uuids, as node derives them.
func (ix *exportIndex) Get(ctx context.Context, uuids []string) (map[string]memsync.Node, error) {
	out := make(map[string]memsync.Node, len(uuids))
	for _, id := range uuids {
		i, ok := ix.byUUID[id]
		if !ok {
			continue
		}
		n, err := ix.node(i)
		if err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, nil
}

// Incoming is memsync.SignalReader's: every record naming one of uuids
// through links, supports or conflicts_with, in reading order, as the
// offline path gives them.
func (ix *exportIndex) Incoming(ctx context.Context, uuids []string) ([]memsync.Reference, error) {
	want := make(map[string]bool, len(uuids))
	var sources []int32
	for _, id := range uuids {
		if !want[id] {
			want[id] = true
			sources = append(sources, ix.named[id]...)
		}
	}
	slices.Sort(sources)
	sources = slices.Compact(sources)
	var refs []memsync.Reference
	for _, s := range sources {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		src, err := ix.plainNode(s)
		if err != nil {
			return nil, err
		}
		refs = append(refs, read.References(src, want)...)
	}
	return refs, nil
}
