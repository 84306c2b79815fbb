package webui

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/score"
)

// entityDays is how far back the entity index reads (at most
// TimelineMax records): the engine has no list of entities, so the index
// is the entities the newest records mention.
const entityDays = 90

// entityRow is one entity of the index.
type entityRow struct {
	Name, Href, Newest string
	Search             string // its memories: search for it, retired ones too
	Mentions           int
	Groups             []string
	newest             time.Time
	groups             map[string]int
}

type entitiesBody struct {
	Sort    string
	Rows    []entityRow
	Bound   string
	Sorts   []link
	Records int
}

func (s *Server) entitiesPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	p := s.newPage(r, "entities", "entities", v)
	body := entitiesBody{Sort: r.URL.Query().Get("sort")}
	if body.Sort != "newest" && body.Sort != "name" {
		body.Sort = "mentions"
	}
	for _, so := range []string{"mentions", "newest", "name"} {
		body.Sorts = append(body.Sorts, link{Label: so, Href: p.URL("/entities", "sort", so), Current: so == body.Sort})
	}
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	err := rd.do(ctx, func(sr memsync.Searcher) error {
		l, ok := sr.(memsync.Lister)
		if !ok {
			return fmt.Errorf("%T cannot list memories", sr)
		}
		r, err := s.recentWindow(ctx, l, v)
		if err != nil {
			return err
		}
		nodes, bounded := r.since(s.cfg.Now().Add(-entityDays * score.Day))
		body.Records = len(nodes)
		body.Bound = fmt.Sprintf("the entities the records of the last %d days mention (%d records)", entityDays, len(nodes))
		if bounded {
			body.Bound = fmt.Sprintf("the entities the newest %d records mention", len(nodes))
		}
		byKey := map[string]*entityRow{}
		body.Rows = nil
		var order []string
		for _, n := range nodes {
			for _, e := range n.Record.AllEntities() {
				k := strings.ToLower(e)
				row := byKey[k]
				if row == nil {
					row = &entityRow{Name: e, Href: p.entityHref(e), Search: p.URL("/search", "q", e, "status", "all"), groups: map[string]int{}}
					byKey[k] = row
					order = append(order, k)
				}
				row.Mentions++
				row.groups[n.Record.GroupID()]++
				if n.TS.After(row.newest) {
					row.newest = n.TS
				}
			}
		}
		for _, k := range order {
			row := byKey[k]
			row.Newest = row.newest.UTC().Format(time.RFC3339)
			for g, c := range row.groups {
				row.Groups = append(row.Groups, fmt.Sprintf("%s %d", g, c))
			}
			slices.Sort(row.Groups)
			body.Rows = append(body.Rows, *row)
		}
		slices.SortStableFunc(body.Rows, func(a, b entityRow) int {
			switch body.Sort {
			case "newest":
				return b.newest.Compare(a.newest)
			case "name":
				return cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
			}
			return cmp.Or(cmp.Compare(b.Mentions, a.Mentions), b.newest.Compare(a.newest))
		})
		return nil
	})
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	p.Source, p.Reason = rd.source()
	p.Body = body
	s.render(w, http.StatusOK, p)
}
