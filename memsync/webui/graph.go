package webui

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync"

	readpath "github.com/memsync/memsync/memsync/read"
)

// Graph page bounds: the drawing stays readable and the reads few.
const (
	graphWidth   = 1000
	graphHeight  = 900
	graphPerHop  = 24
	graphEntityN = 50
)

// gnode is one node of a drawn neighbourhood.
type gnode struct {
	memView
	Entity string // set for an entity's node (no uuid)
	Label  string
	Hop    int
	X, Y   float64
	Href   string
	// The label: at (LX, LY), turned Rotate degrees and anchored
	// Anchor, radially outward for a ring so that neighbours' labels
	// never overlap.
	LX, LY, Rotate float64
	Anchor         string
}

// gedge is one drawn edge.
type gedge struct {
	Type           string
	From, To       string
	X1, Y1, X2, Y2 float64
	edgeStyle
}

// edgeStyle is how an edge type is drawn; edgeStyles are the legend.
type edgeStyle struct {
	Type, Label, Stroke, Dash, Marker string
}

var edgeStyles = []edgeStyle{
	{Type: memsync.RelLinksTo, Label: "links to", Stroke: "#57606a", Marker: "arrow-links"},
	{Type: memsync.RelSupports, Label: "supports", Stroke: "#1a7f37", Dash: "", Marker: "arrow-supports"},
	{Type: "SUPERSEDES", Label: "supersedes (replaces)", Stroke: "#8250df", Dash: "8 4", Marker: "arrow-supersedes"},
	{Type: memsync.RelConflictsWith, Label: "conflicts with", Stroke: "#cf222e", Dash: "3 3", Marker: "arrow-conflicts"},
	{Type: "MENTIONS", Label: "mentions the entity", Stroke: "#7c3aed", Dash: "1 3", Marker: "arrow-mentions"},
}

// styleOf is the style of edge type typ (links' for a type not listed).
func styleOf(typ string) edgeStyle {
	for _, st := range edgeStyles {
		if st.Type == typ {
			return st
		}
	}
	st := edgeStyles[0]
	st.Type, st.Label = typ, strings.ToLower(strings.ReplaceAll(typ, "_", " "))
	return st
}

type graphBody struct {
	Legend []edgeStyle // every type, and any other this graph draws
	Title  string
	Center string
	Nodes  []gnode
	Edges  []gedge
	Width  int
	Height int
	Capped bool
}

// neighbourhood grows a two-hop neighbourhood for a viewer.
type neighbourhood struct {
	p      *page
	nodes  map[string]*gnode
	order  []string
	edges  map[[3]string]bool
	list   [][3]string
	capped bool
}

func newNeighbourhood(p *page) *neighbourhood {
	return &neighbourhood{p: p, nodes: map[string]*gnode{}, edges: map[[3]string]bool{}}
}

func (nb *neighbourhood) addNode(n *memsync.Node, hop int) bool {
	if _, ok := nb.nodes[n.UUID]; ok {
		return true
	}
	if !nb.p.v.sees(n.Record.GroupID()) {
		return false
	}
	m := nb.p.mem(n)
	nb.nodes[n.UUID] = &gnode{memView: m, Label: short(string(n.Kind)+": "+n.Text, 28), Hop: hop, Href: m.Href}
	nb.order = append(nb.order, n.UUID)
	return true
}

func (nb *neighbourhood) addEdge(typ, from, to string) {
	k := [3]string{typ, from, to}
	if !nb.edges[k] {
		nb.edges[k] = true
		nb.list = append(nb.list, k)
	}
}

// grow adds the memories one hop from frontier (hop - 1 away) as hop:
// the ones their records name, the records naming them, and the records
// replacing them, each only when the viewer may see it.
func (nb *neighbourhood) grow(ctx context.Context, sr memsync.Searcher, frontier []string, hop int) ([]string, error) {
	var next []string
	budget := graphPerHop
	take := func(n *memsync.Node) bool {
		if _, ok := nb.nodes[n.UUID]; ok {
			return true
		}
		if budget == 0 {
			nb.capped = true
			return false
		}
		if nb.addNode(n, hop) {
			budget--
			next = append(next, n.UUID)
			return true
		}
		return false
	}
	want := map[string][][2]string{} // target -> (type, from)
	var ids, mems []string
	for _, id := range frontier {
		if g := nb.nodes[id]; g != nil && g.UUID != "" {
			mems = append(mems, id)
		}
	}
	from, err := sr.Get(ctx, mems)
	if err != nil {
		return nil, fmt.Errorf("read %d memories: %w", len(mems), err)
	}
	for _, id := range mems {
		n, ok := from[id]
		if !ok {
			continue
		}
		for _, e := range outEdges(&n.Record) {
			want[e[1]] = append(want[e[1]], [2]string{e[0], id})
			ids = append(ids, e[1])
		}
		if n.ReplacedBy != "" {
			want[n.ReplacedBy] = append(want[n.ReplacedBy], [2]string{"SUPERSEDES*", id})
			ids = append(ids, n.ReplacedBy)
		}
	}
	got, err := sr.Get(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read neighbours: %w", err)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		n, ok := got[id]
		if !ok || !take(&n) {
			continue
		}
		for _, e := range want[id] {
			if e[0] == "SUPERSEDES*" {
				nb.addEdge("SUPERSEDES", id, e[1])
			} else {
				nb.addEdge(e[0], e[1], id)
			}
		}
	}
	refs, err := sr.Incoming(ctx, mems)
	if err != nil {
		return nil, fmt.Errorf("read records naming %d memories: %w", len(mems), err)
	}
	slices.SortFunc(refs, func(a, b memsync.Reference) int { return strings.Compare(a.Source.UUID, b.Source.UUID) })
	for _, ref := range refs {
		if take(&ref.Source) {
			nb.addEdge(ref.Relation, ref.Source.UUID, ref.Target)
		}
	}
	return next, nil
}

// layout places the centre in the middle and each hop on its own ring.
func (nb *neighbourhood) layout() graphBody {
	body := graphBody{Width: graphWidth, Height: graphHeight, Capped: nb.capped}
	cx, cy := float64(graphWidth)/2, float64(graphHeight)/2
	byHop := map[int][]*gnode{}
	for _, id := range nb.order {
		g := nb.nodes[id]
		byHop[g.Hop] = append(byHop[g.Hop], g)
	}
	radius := map[int]float64{0: 0, 1: 160, 2: 310}
	// Labels run radially outward: hop 1's must end before hop 2's ring.
	labelRunes := map[int]int{1: 22, 2: 22}
	for hop, gs := range byHop {
		for i, g := range gs {
			a := 2*math.Pi*float64(i)/float64(len(gs)) + float64(hop)*0.35
			g.X, g.Y = round1(cx+radius[hop]*math.Cos(a)), round1(cy+radius[hop]*math.Sin(a))
			if hop == 0 {
				g.LX, g.LY, g.Anchor = g.X, g.Y+24, "middle"
				continue
			}
			if n := labelRunes[hop]; len([]rune(g.Label)) > n {
				g.Label = short(g.Label, n)
			}
			off := 12.0
			g.LX, g.LY = round1(g.X+off*math.Cos(a)), round1(g.Y+off*math.Sin(a))
			deg := a * 180 / math.Pi
			g.Rotate, g.Anchor = round1(math.Mod(deg, 360)), "start"
			if math.Cos(a) < 0 {
				g.Rotate, g.Anchor = round1(math.Mod(deg+180, 360)), "end"
			}
		}
	}
	for _, id := range nb.order {
		body.Nodes = append(body.Nodes, *nb.nodes[id])
	}
	for _, e := range nb.list {
		from, to := nb.nodes[e[1]], nb.nodes[e[2]]
		if from == nil || to == nil {
			continue
		}
		st := styleOf(e[0])
		body.Edges = append(body.Edges, gedge{Type: e[0], From: e[1], To: e[2], X1: from.X, Y1: from.Y, X2: to.X, Y2: to.Y, edgeStyle: st})
		if !slices.ContainsFunc(body.Legend, func(l edgeStyle) bool { return l.Type == st.Type }) && !slices.ContainsFunc(edgeStyles, func(l edgeStyle) bool { return l.Type == st.Type }) {
			body.Legend = append(body.Legend, st)
		}
	}
	body.Legend = append(slices.Clone(edgeStyles), body.Legend...)
	return body
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func (s *Server) graphPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	uuid := r.PathValue("uuid")
	p := s.newPage(r, "graph", "graph "+uuid, v)
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	var body graphBody
	found := false
	build := func(sr memsync.Searcher) error {
		nb := newNeighbourhood(p)
		got, err := sr.Get(ctx, []string{uuid})
		if err != nil {
			return fmt.Errorf("read %s: %w", uuid, err)
		}
		n, ok := got[uuid]
		if found = ok && nb.addNode(&n, 0); !found {
			return nil
		}
		hop1, err := nb.grow(ctx, sr, []string{uuid}, 1)
		if err != nil {
			return err
		}
		if _, err := nb.grow(ctx, sr, hop1, 2); err != nil {
			return err
		}
		body = nb.layout()
		body.Center, body.Title = uuid, short(n.Text, 80)
		return nil
	}
	// Not projected yet: the journals have it.
	err := rd.doMissing(ctx, build, func(err error) bool { return err == nil && !found })
	if err != nil {
		s.fail(w, r, v, err)
		return
	}
	if !found {
		s.notFound(w, r, "no such memory: "+uuid)
		return
	}
	p.Source, p.Reason = rd.source()
	p.Body = body
	s.render(w, http.StatusOK, p)
}

// entityGraphPage draws an entity, the memories the viewer may see that
// mention it (found by recall of its name), and one hop beyond them.
func (s *Server) entityGraphPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.viewerOrNotFound(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	p := s.newPage(r, "graph", "entity "+name, v)
	ctx := r.Context()
	rd := s.open(ctx)
	defer rd.close()
	var body graphBody
	err := rd.do(ctx, func(sr memsync.Searcher) error {
		nb := newNeighbourhood(p)
		key := "entity:" + name
		nb.nodes[key] = &gnode{Entity: name, Label: short(name, 28), Hop: 0, Href: p.entityHref(name)}
		nb.order = append(nb.order, key)
		hits, err := readpath.Search(ctx, sr, memsync.SearchQuery{Text: name, Groups: v.groups(), Limit: graphEntityN, All: true})
		if err != nil {
			return fmt.Errorf("recall %q: %w", name, err)
		}
		var hop1 []string
		for _, h := range hits {
			if !slices.ContainsFunc(h.Record.AllEntities(), func(e string) bool { return strings.EqualFold(e, name) }) {
				continue
			}
			if len(hop1) == graphPerHop {
				nb.capped = true
				break
			}
			if nb.addNode(&h.Node, 1) {
				hop1 = append(hop1, h.UUID)
				nb.addEdge("MENTIONS", h.UUID, key)
			}
		}
		if _, err := nb.grow(ctx, sr, hop1, 2); err != nil {
			return err
		}
		body = nb.layout()
		body.Title = "entity " + name
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

// chart is a server-drawn line chart of importance and confidence.
type chart struct {
	Width, Height int
	Importance    string // polyline points
	Confidence    string
	Marks         []chartMark
	From, To      string
	Empty         bool
}

type chartMark struct {
	X, YI, YC  float64
	Kind, When string
	Importance float64
	Confidence float64
}

// historyChart draws points (read.History) on a time axis.
func historyChart(points []memsync.HistoryPoint) chart {
	c := chart{Width: 640, Height: 200}
	if len(points) == 0 {
		c.Empty = true
		return c
	}
	const padL, padR, padT, padB = 40.0, 10.0, 10.0, 24.0
	w, h := float64(c.Width)-padL-padR, float64(c.Height)-padT-padB
	t0, t1 := points[0].At, points[len(points)-1].At
	span := t1.Sub(t0)
	x := func(t time.Time) float64 {
		if span <= 0 {
			return padL + w/2
		}
		return round1(padL + w*float64(t.Sub(t0))/float64(span))
	}
	y := func(v float64) float64 { return round1(padT + h*(1-v)) }
	var imp, conf []string
	for _, pt := range points {
		px := x(pt.At)
		imp = append(imp, fmt.Sprintf("%.1f,%.1f", px, y(pt.Importance)))
		conf = append(conf, fmt.Sprintf("%.1f,%.1f", px, y(pt.Confidence)))
		c.Marks = append(c.Marks, chartMark{X: px, YI: y(pt.Importance), YC: y(pt.Confidence), Kind: pt.Kind,
			When: pt.At.UTC().Format(time.RFC3339), Importance: pt.Importance, Confidence: pt.Confidence})
	}
	c.Importance, c.Confidence = strings.Join(imp, " "), strings.Join(conf, " ")
	c.From, c.To = t0.UTC().Format("2006-01-02"), t1.UTC().Format("2006-01-02")
	return c
}

// entityHref is the graph page of entity name.
func (p *page) entityHref(name string) string { return p.URL("/graph/entity/" + url.PathEscape(name)) }
