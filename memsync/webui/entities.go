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
// TimelineMax records, counted by the store: memsync.WindowReader): the
// engine has no list of entities, so the index is the entities the
// newest records mention.
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
		m, err := s.windowMentions(ctx, sr, v, s.cfg.Now().Add(-entityDays*score.Day))
		if err != nil {
			return err
		}
		body.Records = m.Records
		body.Bound = fmt.Sprintf("the entities the records of the last %d days mention (%d records)", entityDays, m.Records)
		if m.Bounded {
			body.Bound = fmt.Sprintf("the entities the newest %d records mention", m.Records)
		}
		// One row per name whatever its case, spelled as its newest
		// mention spells it, its counts per group.
		byKey := map[string]*entityRow{}
		body.Rows = nil
		var order []string
		for _, e := range m.Entities {
			k := strings.ToLower(e.Name)
			row := byKey[k]
			if row == nil {
				row = &entityRow{Name: e.Name, groups: map[string]int{}}
				byKey[k] = row
				order = append(order, k)
			}
			if e.Newest.After(row.newest) {
				row.newest, row.Name = e.Newest, e.Name
			}
			row.Mentions += e.Mentions
			row.groups[e.Group] += e.Mentions
		}
		for _, k := range order {
			row := byKey[k]
			row.Href, row.Search = p.entityHref(row.Name), p.URL("/search", "q", row.Name, "status", "all")
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
