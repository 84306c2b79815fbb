package journal_test

import (
	"reflect"
	"testing"

	"github.com/memsync/memsync/journal"
)

func TestExtractEntities(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"no mentions at all", nil},
		{"ask @Shaun about #moonshot", []string{"@Shaun", "#moonshot"}},
		{"@start and end@ and #end", []string{"@start", "#end"}},
		{"see [[Q3 Plan]] and [[Acme Corp|Acme]]", []string{"Q3 Plan", "Acme Corp"}},
		{"order: [[Wiki]] then @name then #tag", []string{"Wiki", "@name", "#tag"}},
		{"trailing punctuation: @Mira. #db, @bob! #x? (@paren) @dash-", []string{"@Mira", "#db", "@bob", "#x", "@paren", "@dash"}},
		{"possessive @Mira's idea", []string{"@Mira"}},
		{"dotted @acme.corp and v#1.2", []string{"@acme.corp"}},
		{"mail a@b.com or ops@example.org", nil},
		{"url https://x.io/page#anchor and &#39; entity", nil},
		{"C# and F# are languages", nil},
		{"issue #123 is not an entity but #v2 is", []string{"#v2"}},
		{"double @@x and ##y", nil},
		{"unicode @Zoë #日本 [[Ünïcödé]]", []string{"@Zoë", "#日本", "Ünïcödé"}},
		{"underscores @snake_case #_private", []string{"@snake_case", "#_private"}},
		{"empty [[ ]] and [[]] and unclosed [[open", nil},
		{"multiline @a\n#b\n[[c]]", []string{"@a", "#b", "c"}},
		{"in brackets [[#tag]]", []string{"#tag", "#tag"}},
		{"lone sigils @ # [[", nil},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if got := journal.ExtractEntities(tc.text); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ExtractEntities(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestAllEntities(t *testing.T) {
	r := journal.Record{
		Entities: []string{" Acme Corp ", "#postgres", "", "Acme Corp"},
		Text:     "Chose #postgres over @Mira's idea for [[Q3 Plan]] with @Mira",
	}
	want := []string{"Acme Corp", "#postgres", "@Mira", "Q3 Plan"}
	if got := r.AllEntities(); !reflect.DeepEqual(got, want) {
		t.Errorf("AllEntities = %q, want %q", got, want)
	}
}
