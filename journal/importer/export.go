package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/memsync/memsync/journal"
)

// ExportFormats are the formats Export writes.
var ExportFormats = []string{"markdown", "mcp-memory", "jsonl"}

// Export writes recs, oldest first as given, in format:
//
//	jsonl       every record as its canonical journal line
//	markdown    a section per kind, one list item per memory with its
//	            date and uuid
//	mcp-memory  the MCP memory server's memory.jsonl: the memories of
//	            each record's first entity as one entity's observations
//	            (a memory without an entity is an entity named by its
//	            uuid), its type the entity type its first memory was
//	            imported with, else that memory's kind; a memory imported
//	            from a relation is that relation again, and each link
//	            between memories of two entities a relation "links_to".
//	            It imports back with `memsync import mcp-memory`, into
//	            the same agent writing nothing.
func Export(w io.Writer, format, agent string, recs []journal.Record) error {
	bw := bufio.NewWriter(w)
	switch format {
	case "jsonl":
		for i := range recs {
			bw.Write(recs[i].Canonical())
			bw.WriteByte('\n')
		}
	case "markdown":
		exportMarkdown(bw, agent, recs)
	case "mcp-memory":
		if err := exportMCP(bw, recs); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown export format %q (one of %s)", format, strings.Join(ExportFormats, ", "))
	}
	return bw.Flush()
}

func exportMarkdown(w *bufio.Writer, agent string, recs []journal.Record) {
	WriteMarkdownHeader(w, agent, len(recs))
	for _, k := range journal.Kinds {
		first := true
		for i := range recs {
			r := &recs[i]
			if r.Kind != k {
				continue
			}
			if first {
				WriteMarkdownSection(w, k)
				first = false
			}
			WriteMarkdownItem(w, r)
		}
	}
}

// WriteMarkdownHeader, WriteMarkdownSection and WriteMarkdownItem write
// the markdown export a part at a time, for a caller that streams it: the
// header (n memories), then for each kind of journal.Kinds that has
// memories its section and its memories, oldest first.
func WriteMarkdownHeader(w io.Writer, agent string, n int) {
	fmt.Fprintf(w, "# Memory of %s\n\nExported by memsync: %d memories, its own and the shared ones, oldest first in each section.\n", agent, n)
}

// WriteMarkdownSection starts the section of kind k.
func WriteMarkdownSection(w io.Writer, k journal.Kind) { fmt.Fprintf(w, "\n## %s\n\n", k) }

// WriteMarkdownItem writes one memory of a section.
func WriteMarkdownItem(w io.Writer, r *journal.Record) {
	text := strings.ReplaceAll(strings.TrimSpace(r.Text), "\n", "\n  ")
	fmt.Fprintf(w, "- %s\n  <sub>%s · %s · %s · `%s`</sub>\n", text, r.TS.UTC().Format("2006-01-02 15:04"), r.Agent, r.Scope, r.UUID)
}

// MCPEntityName is the entity a record's memory is an observation of in
// the mcp-memory export: its first entity, else its uuid.
func MCPEntityName(r *journal.Record) string {
	if es := r.AllEntities(); len(es) > 0 {
		return es[0]
	}
	return r.UUID
}

// WriteMCPEntity writes one entity line of the mcp-memory export, byte
// for byte as Export does, with the observations obs yields (at least
// one), so that a caller streams them: {"type":"entity","name":…,
// "entityType":…,"observations":[…]}.
func WriteMCPEntity(w io.Writer, name, entityType string, obs func(yield func(observation string) error) error) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	str := func(v string) []byte {
		b.Reset()
		_ = enc.Encode(v) // a string always encodes
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriter(w)
		defer bw.Flush()
	}
	bw.WriteString(`{"type":"entity","name":`)
	bw.Write(str(name))
	bw.WriteString(`,"entityType":`)
	bw.Write(str(entityType))
	bw.WriteString(`,"observations":[`)
	first := true
	err := obs(func(o string) error {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		_, err := bw.Write(str(strings.TrimSpace(o)))
		return err
	})
	if err != nil {
		return err
	}
	_, err = bw.WriteString("]}\n")
	return err
}

// WriteMCPRelation writes one relation line of the mcp-memory export: a
// link between the memories of two entities.
func WriteMCPRelation(w io.Writer, from, to string) error {
	return WriteMCPRelationOf(w, MCPRelation{From: from, To: to, RelationType: mcpLinksTo})
}

// WriteMCPRelationOf writes one relation line of the mcp-memory export.
func WriteMCPRelationOf(w io.Writer, rel MCPRelation) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(mcpRelation{Type: "relation", From: rel.From, To: rel.To, RelationType: rel.RelationType})
}

// mcpRelation is a relation line of the mcp-memory export.
type mcpRelation struct {
	Type         string `json:"type"`
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

func exportMCP(w *bufio.Writer, recs []journal.Record) error {
	type entity struct {
		Type         string   `json:"type"`
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	}
	type relation struct {
		Type         string `json:"type"`
		From         string `json:"from"`
		To           string `json:"to"`
		RelationType string `json:"relationType"`
	}
	nameOf := map[string]string{}
	var order []string
	entities := map[string]*entity{}
	for i := range recs {
		r := &recs[i]
		if _, ok := MCPRelationOf(r); ok {
			continue
		}
		name := MCPEntityName(r)
		nameOf[r.UUID] = name
		e, ok := entities[name]
		if !ok {
			e = &entity{Type: "entity", Name: name, EntityType: MCPEntityType(r)}
			entities[name] = e
			order = append(order, name)
		}
		e.Observations = append(e.Observations, strings.TrimSpace(r.Text))
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, n := range order {
		if err := enc.Encode(entities[n]); err != nil {
			return err
		}
	}
	seen := map[relation]bool{}
	for i := range recs {
		r := &recs[i]
		if mr, ok := MCPRelationOf(r); ok {
			rel := relation{Type: "relation", From: mr.From, To: mr.To, RelationType: mr.RelationType}
			if !seen[rel] {
				seen[rel] = true
				if err := enc.Encode(rel); err != nil {
					return err
				}
			}
			continue
		}
		for _, l := range r.Links {
			to, ok := nameOf[l]
			if !ok || to == nameOf[r.UUID] {
				continue
			}
			rel := relation{Type: "relation", From: nameOf[r.UUID], To: to, RelationType: mcpLinksTo}
			if !seen[rel] {
				seen[rel] = true
				if err := enc.Encode(rel); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
