package importer

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
)

// The MCP reference memory server's knowledge graph file, memory.jsonl
// (the source: the file, or a directory holding memory.jsonl or
// memory.json), one JSON object a line:
//
//	{"type":"entity","name":"...","entityType":"...","observations":["..."]}
//	{"type":"relation","from":"...","to":"...","relationType":"..."}
//
// Every observation is a fact (identity: its entity and its text) with
// the entity as entity, the entity type as tag and as mcp_entity_type
// metadata; every relation is a fact "from relation to" with both ends as
// entities and the relation as mcp_relation metadata, so that the
// mcp-memory export writes the entity with its type and the relation as
// a relation again. The file gives no dates: records carry its
// modification time (a microsecond apart, in the file's order, so that
// the export writes them back in that order), not part of their identity.
// An item the agent already says (the same observation of the same
// entity, the same relation, or a link between memories of the two
// entities for links_to) is already imported: an export read back into
// its own agent writes nothing.

func parseMCPMemory(root string, out *Source) error {
	root, ok := namedIn(root, []string{"memory.jsonl", "memory.json"}, out)
	if !ok {
		return nil
	}
	files, err := readFiles(root, func(rel string) bool { return rel == "memory.jsonl" || rel == "memory.json" }, out)
	if err != nil {
		return err
	}
	for _, f := range files {
		mcpMemoryFile(f, out)
	}
	return nil
}

// mcpLine is one line of memory.jsonl.
type mcpLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	RelationType string   `json:"relationType"`
}

// mcpMemoryFile reads one memory.jsonl.
func mcpMemoryFile(f sourceFile, out *Source) {
	seq := 0
	next := func() time.Time { seq++; return f.mod.Add(time.Duration(seq-1) * time.Microsecond) }
	for i, line := range strings.Split(f.data, "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var l mcpLine
		dec := json.NewDecoder(bytes.NewReader([]byte(line)))
		if err := dec.Decode(&l); err != nil || dec.More() {
			if err == nil {
				err = errTrailing
			}
			out.problem(f.rel, n, "not a JSON object: %s", oneLine(err))
			continue
		}
		switch l.Type {
		case "entity":
			name := strings.TrimSpace(l.Name)
			if name == "" {
				out.problem(f.rel, n, "entity without a name")
				continue
			}
			if len(l.Observations) == 0 {
				out.skip(f.rel+":"+itoa(n), "entity %q has no observations", name)
			}
			for _, o := range l.Observations {
				if strings.TrimSpace(o) == "" {
					continue
				}
				it := Item{Key: "entity:" + name, File: f.rel, Line: n, Undated: true}
				r := &it.Record
				r.TS, r.Kind, r.Text = next(), journal.KindFact, strings.TrimSpace(o)
				r.Entities = []string{name}
				if t := strings.TrimSpace(l.EntityType); t != "" {
					r.Tags = []string{t}
					r.Extra = map[string]json.RawMessage{FieldMCPEntityType: json.RawMessage(quote(t))}
				}
				it.ContentKey = ContentKeyObservation(name, r.Text)
				out.add(&it)
			}
		case "relation":
			from, to, rel := strings.TrimSpace(l.From), strings.TrimSpace(l.To), strings.TrimSpace(l.RelationType)
			if from == "" || to == "" || rel == "" {
				out.problem(f.rel, n, "relation needs from, to and relationType")
				continue
			}
			it := Item{Key: "relation", File: f.rel, Line: n, Undated: true}
			r := &it.Record
			r.TS, r.Kind = next(), journal.KindFact
			r.Text = from + " " + strings.ReplaceAll(rel, "_", " ") + " " + to
			r.Entities = appendUnique([]string{from}, to)
			r.Tags = []string{"relation", rel}
			raw, _ := json.Marshal(MCPRelation{From: from, To: to, RelationType: rel})
			r.Extra = map[string]json.RawMessage{FieldMCPRelation: raw}
			it.ContentKey = ContentKeyRelation(from, to, rel)
			out.add(&it)
		default:
			out.problem(f.rel, n, "type %q is neither entity nor relation", l.Type)
		}
	}
}
