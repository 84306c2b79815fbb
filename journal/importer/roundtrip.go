package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/memsync/memsync/journal"
)

// What makes a round trip the identity: an item read back from an export
// of the agent it is imported into is found among the agent's records,
// by the uuid it carries (Item.Origin, jsonl) or by what it says
// (Item.ContentKey, mcp-memory), and nothing is written for it.

// FieldOriginUUID is the metadata of a record `import jsonl` wrote: the
// uuid of the record it copies, so that importing it again (or the
// original back into its own agent) writes nothing.
const FieldOriginUUID = "origin_uuid"

// FieldMCPEntityType and FieldMCPRelation are the metadata of a record
// `import mcp-memory` wrote: the entity type of the entity it is an
// observation of, and (for a relation) the relation itself, so that the
// mcp-memory export writes the entity with its type and the relation as a
// relation, both ends kept.
const (
	FieldMCPEntityType = "mcp_entity_type"
	FieldMCPRelation   = "mcp_relation"
)

// MCPRelation is a relation of the MCP memory server's graph: from
// relationType to.
type MCPRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// MCPRelationOf is the relation a record `import mcp-memory` wrote for a
// relation line stands for; ok false for any other record.
func MCPRelationOf(r *journal.Record) (rel MCPRelation, ok bool) {
	raw, has := r.Extra[FieldMCPRelation]
	if !has || json.Unmarshal(raw, &rel) != nil || rel.From == "" || rel.To == "" || rel.RelationType == "" {
		return MCPRelation{}, false
	}
	return rel, true
}

// MCPEntityType is the entity type the mcp-memory export gives the entity
// of r: the type it was imported with, else r's kind.
func MCPEntityType(r *journal.Record) string {
	if t := extraString(r, FieldMCPEntityType); t != "" {
		return t
	}
	return string(r.Kind)
}

// ContentKeyObservation is the ContentKey of an observation text of
// entity; ContentKeyRelation of a relation.
func ContentKeyObservation(entity, text string) string {
	return "obs\x00" + entity + "\x00" + strings.TrimSpace(text)
}

// ContentKeyRelation is the ContentKey of the relation from relType to.
func ContentKeyRelation(from, to, relType string) string {
	return "rel\x00" + from + "\x00" + to + "\x00" + relType
}

func extraString(r *journal.Record, field string) string {
	raw, ok := r.Extra[field]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// seenCopies is what the records the agent sees (its own, and the shared
// ones of other agents) say to items with an Origin or a ContentKey.
type seenCopies struct {
	uuids   map[string]bool   // every uuid
	origins map[string]string // FieldOriginUUID → the uuid that copies it
	content map[string]string // contentDigest of a ContentKey → a uuid saying it
}

// scanRoundTrip fills have.rt (shared: some item has an Origin or a
// ContentKey; content: some has a ContentKey): from the agent's own
// journals (files), every record; from the other agents'
// (opts.SharedJournals), their shared records only.
func scanRoundTrip(have *existing, shared, content bool, files []string, opts Options) error {
	if !shared {
		return nil
	}
	var others []string
	if opts.SharedJournals != nil {
		var err error
		if others, err = opts.SharedJournals(); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	var cs *contentScan
	if content {
		cs = newContentScan()
	}
	have.rt = seenCopies{uuids: map[string]bool{}, origins: map[string]string{}, content: map[string]string{}}
	if err := have.rt.scan(files, false, cs); err != nil {
		return err
	}
	if err := have.rt.scan(others, true, cs); err != nil {
		return err
	}
	if cs != nil {
		cs.keys(have.rt.content)
	}
	return nil
}

// already is the uuid of the record the agent sees that is the item
// with origin (Item.Origin) and content (the contentDigest of its
// ContentKey), when there is one.
func (ex *existing) already(origin, content string) (string, bool) {
	if origin != "" {
		if ex.rt.uuids[origin] {
			return origin, true
		}
		if u, ok := ex.rt.origins[origin]; ok {
			return u, true
		}
	}
	if content != "" {
		if u, ok := ex.rt.content[content]; ok {
			return u, true
		}
	}
	return "", false
}

// contentScan gathers the ContentKeys of a journal's records as the
// mcp-memory export writes them: each memory an observation of its
// entity (MCPEntityName), each imported relation a relation, and each
// link between memories of two entities a relation links_to (resolved
// once every record is read). Superseded records are left out, as the
// export leaves them out.
type contentScan struct {
	entity  map[string]string // uuid → its entity's name
	obs     map[string]string // uuid → its ContentKey
	links   map[string][]string
	retired map[string]bool
}

func newContentScan() *contentScan {
	return &contentScan{entity: map[string]string{}, obs: map[string]string{}, links: map[string][]string{}, retired: map[string]bool{}}
}

func (c *contentScan) add(r *journal.Record) {
	for _, id := range r.Supersedes {
		c.retired[id] = true
	}
	switch r.Kind {
	case journal.KindFeedback, journal.KindPromotion, journal.KindCompaction:
		return
	}
	if rel, ok := MCPRelationOf(r); ok {
		c.obs[r.UUID] = ContentKeyRelation(rel.From, rel.To, rel.RelationType)
		return
	}
	name := MCPEntityName(r)
	c.entity[r.UUID] = name
	c.obs[r.UUID] = ContentKeyObservation(name, r.Text)
	if len(r.Links) > 0 {
		c.links[r.UUID] = r.Links
	}
}

// keys adds every key to into (as its contentDigest), each naming a uuid
// saying it.
func (c *contentScan) keys(into map[string]string) {
	for u, k := range c.obs {
		if !c.retired[u] {
			into[contentDigest(k)] = u
		}
	}
	for u, ls := range c.links {
		if c.retired[u] {
			continue
		}
		for _, l := range ls {
			if to, ok := c.entity[l]; ok && !c.retired[l] && to != c.entity[u] {
				into[contentDigest(ContentKeyRelation(c.entity[u], to, mcpLinksTo))] = u
			}
		}
	}
}

// mcpLinksTo is the relation type of a link in the mcp-memory export.
const mcpLinksTo = "links_to"

// scan adds the records of files (sharedOnly: their shared records;
// private records of other agents are never looked at beyond their
// scope): their uuids, origins and (cs set) their ContentKeys.
func (sc *seenCopies) scan(files []string, sharedOnly bool, cs *contentScan) error {
	for _, f := range files {
		err := journal.EachLine(f, func(l journal.Line) error {
			r := &l.Record
			if l.Err != nil || (sharedOnly && r.Scope != journal.ScopeShared) {
				return nil
			}
			sc.uuids[strings.Clone(r.UUID)] = true
			if o := extraString(r, FieldOriginUUID); o != "" {
				sc.origins[o] = strings.Clone(r.UUID)
			}
			if cs != nil {
				c := *r
				c.UUID, c.Text = strings.Clone(r.UUID), strings.Clone(r.Text)
				c.Entities, c.Links, c.Supersedes = slicesClone(r.Entities), slicesClone(r.Links), slicesClone(r.Supersedes)
				cs.add(&c)
			}
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("import: read %s: %w", f, err)
		}
	}
	return nil
}

func slicesClone(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.Clone(x)
	}
	return out
}
