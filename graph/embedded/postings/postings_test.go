package postings

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func encode(ps ...Posting) []byte {
	var b []byte
	var prev int64
	for _, p := range ps {
		b = Append(b, prev, p)
		prev = p.ID
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Posting
	}{
		{"empty", nil},
		{"one", []Posting{{ID: 1, Group: 0, Freq: 2, Length: 3}}},
		{"wide values", []Posting{{ID: 7, Group: math.MaxUint32, Freq: math.MaxUint32, Length: math.MaxUint32},
			{ID: math.MaxInt64, Group: 1, Freq: 1, Length: 1}}},
		{"gaps", []Posting{{ID: 3, Group: 2, Freq: 4, Length: 10}, {ID: 4, Group: 0, Freq: 1, Length: 2}, {ID: 900000, Group: 5, Freq: 6, Length: 40}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode(encode(tc.in...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.in) {
				t.Fatalf("decoded %v, want %v", got, tc.in)
			}
		})
	}
}

func entry(term string, ps ...Posting) Entry {
	e := Entry{Term: term, N: len(ps), List: encode(ps...)}
	if len(ps) > 0 {
		e.Last = ps[len(ps)-1].ID
	}
	return e
}

func TestJoin(t *testing.T) {
	a := []Posting{{ID: 1, Group: 1, Freq: 2, Length: 5}, {ID: 5, Group: 0, Freq: 1, Length: 3}}
	b := []Posting{{ID: 6, Group: 2, Freq: 4, Length: 8}}
	c := []Posting{{ID: 100, Group: 1, Freq: 2, Length: 9}, {ID: 101, Group: 1, Freq: 2, Length: 9}}
	e, err := Join("t", []Entry{entry("t", a...), entry("t"), entry("t", b...), entry("t", c...)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(e.List)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]Posting{}, a...), b...), c...)
	if e.N != len(want) || e.Last != 101 || e.Term != "t" || !reflect.DeepEqual(got, want) {
		t.Fatalf("Join = %+v decoding to %v, want %v", e, got, want)
	}
	// One list: itself, under the term asked for.
	if one, err := Join("t", []Entry{entry("t", c...)}); err != nil || one.N != 2 || one.Last != 101 || string(one.List) != string(encode(c...)) {
		t.Fatalf("Join of one entry = %+v, %v", one, err)
	}
	// Lists out of order are refused, not silently reordered.
	if _, err := Join("t", []Entry{entry("t", b...), entry("t", a...)}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Join of lists out of order: %v, want ErrCorrupt", err)
	}
}

func TestBlock(t *testing.T) {
	entries := []Entry{entry(""), entry("apple", Posting{ID: 3, Group: 1, Freq: 2, Length: 4}),
		entry("kiwi", Posting{ID: 3, Group: 1, Freq: 1, Length: 4}, Posting{ID: 7, Group: 2, Freq: 2, Length: 9})}
	var block []byte
	for _, e := range entries {
		block = AppendEntry(block, e)
	}
	r := NewBlockReader(block)
	var got []Entry
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		got = append(got, e)
	}
	if r.Err() != nil || len(got) != len(entries) {
		t.Fatalf("read %d entries (%v), want %d", len(got), r.Err(), len(entries))
	}
	for i := range got {
		if got[i].Term != entries[i].Term || got[i].N != entries[i].N || got[i].Last != entries[i].Last || string(got[i].List) != string(entries[i].List) {
			t.Fatalf("entry %d = %+v, want %+v", i, got[i], entries[i])
		}
	}
	for _, tc := range []struct {
		term string
		ok   bool
	}{{"kiwi", true}, {"apple", true}, {"", true}, {"banana", false}, {"zebra", false}} {
		e, ok, err := Find(block, tc.term)
		if err != nil || ok != tc.ok || ok && e.Term != tc.term {
			t.Errorf("Find(%q) = %+v, %v, %v; want found %v", tc.term, e, ok, err, tc.ok)
		}
	}
	if _, _, err := Find(block[:len(block)-1], "zebra"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Find in a truncated block: %v, want ErrCorrupt", err)
	}
}

func TestRemove(t *testing.T) {
	ps := []Posting{{ID: 2, Group: 1, Freq: 2, Length: 5}, {ID: 9, Group: 0, Freq: 1, Length: 3}, {ID: 12, Group: 3, Freq: 6, Length: 7}}
	for _, tc := range []struct {
		name string
		id   int64
		ok   bool
		want []Posting
	}{
		{"first", 2, true, ps[1:]},
		{"middle", 9, true, []Posting{ps[0], ps[2]}},
		{"last", 12, true, ps[:2]},
		{"absent", 10, false, ps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, last, ok, err := Remove(encode(ps...), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(out)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok || len(got) != len(tc.want) || len(got) > 0 && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Remove(%d) = %v, %v; want %v, %v", tc.id, got, ok, tc.want, tc.ok)
			}
			if want := tc.want[len(tc.want)-1].ID; last != want {
				t.Fatalf("last id %d, want %d", last, want)
			}
		})
	}
}

func TestCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		list []byte
	}{
		{"truncated", encode(Posting{ID: 300, Group: 1, Freq: 2, Length: 3})[:2]},
		{"repeated id", append(encode(Posting{ID: 3, Group: 1, Freq: 2, Length: 3}), 0, 1, 2, 3)},
		{"group over 32 bits", []byte{1, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 1}},
		{"overlong varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.list); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode = %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestIDF: FTS5's idf, floored at 1e-6 for terms in half the memories or more.
func TestIDF(t *testing.T) {
	for _, tc := range []struct {
		rows, hits int64
		want       float64
	}{
		{1000, 1, math.Log(999.5 / 1.5)},
		{1000, 499, math.Log(501.5 / 499.5)},
		{1000, 500, 1e-6},
		{1000, 1000, 1e-6},
	} {
		if got := IDF(tc.rows, tc.hits); got != tc.want {
			t.Errorf("IDF(%d, %d) = %v, want %v", tc.rows, tc.hits, got, tc.want)
		}
	}
}

// TestPart: more occurrences score more, a longer memory less, and the
// part stays below idf × (k1 + 1).
func TestPart(t *testing.T) {
	idf := IDF(1000, 10)
	if Part(idf, 4, 10, 10) <= Part(idf, 2, 10, 10) {
		t.Error("two occurrences do not score above one")
	}
	if Part(idf, 2, 40, 10) >= Part(idf, 2, 10, 10) {
		t.Error("a longer memory does not score below a shorter one")
	}
	if Part(idf, 2, 10, 10) >= idf*2.2 || Part(idf, 2, 10, 10) <= 0 {
		t.Errorf("Part = %v, outside (0, %v)", Part(idf, 2, 10, 10), idf*2.2)
	}
	if Part(idf, 1, 10, 10) >= Part(idf, 2, 10, 10) {
		t.Error("a meta occurrence does not weigh less than a text one")
	}
}

// FuzzPostingsList: any bytes decode to postings with increasing ids or to
// ErrCorrupt, never a panic, and what decodes encodes back to the same bytes
// when the encoding is canonical.
func FuzzPostingsList(f *testing.F) {
	f.Add(encode(Posting{ID: 1, Group: 2, Freq: 3, Length: 4}, Posting{ID: 9, Group: 0, Freq: 1, Length: 1}))
	f.Add([]byte{0x80})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		var prev int64
		for i, p := range ps {
			if p.ID <= prev && !(i == 0 && p.ID == 0) {
				t.Fatalf("ids not increasing: %d after %d", p.ID, prev)
			}
			prev = p.ID
		}
		again, err := Decode(encode(ps...))
		if err != nil || !reflect.DeepEqual(again, ps) && len(ps) > 0 {
			t.Fatalf("re-encoded %v decodes to %v, %v", ps, again, err)
		}
	})
}

// FuzzPostingsBlock: any bytes read as a block give entries or ErrCorrupt,
// never a panic, and Find agrees with reading every entry.
func FuzzPostingsBlock(f *testing.F) {
	f.Add(AppendEntry(AppendEntry(nil, entry("a", Posting{ID: 1, Group: 2, Freq: 3, Length: 4})), entry("b")), "b")
	f.Add([]byte{0x05, 'a'}, "a")
	f.Fuzz(func(t *testing.T, b []byte, term string) {
		r := NewBlockReader(b)
		found := false
		for e, ok := r.Next(); ok; e, ok = r.Next() {
			found = found || e.Term == term
		}
		if err := r.Err(); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
		e, ok, err := Find(b, term)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Find: error %v is not ErrCorrupt", err)
		}
		if ok && (e.Term != term || !found) {
			t.Fatalf("Find(%q) = %+v, but reading every entry found it: %v", term, e, found)
		}
	})
}
