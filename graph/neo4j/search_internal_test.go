package neo4j

import (
	"testing"

	"github.com/memsync/memsync/memsync/analysis"
)

// TestLuceneQuery: what reaches Lucene is the analyzed terms, quoted and
// escaped, in the terms property or, at half weight, in keywords.
func TestLuceneQuery(t *testing.T) {
	both := func(q string) string { return "terms:" + q + " OR keywords:" + q + "^0.5" }
	for _, tc := range []struct{ in, want string }{
		{`foo:bar AND (`, both(`"foo"`) + " OR " + both(`"bar"`)},
		{`"`, ``},
		{`*  ~ \ ^2`, both(`"2"`)},
		{`Café naïve 日本語`, both(`"cafe"`) + " OR " + both(`"naiv"`) + " OR " + both(`"日本語"`)},
		{`deploy deploys DEPLOYED`, both(`"deploi"`)},
		{`x"q\z`, both(`"x"`) + " OR " + both(`"q"`) + " OR " + both(`"z"`)},
		{``, ``},
	} {
		if got := luceneQuery(analysis.QueryTerms(tc.in)); got != tc.want {
			t.Errorf("luceneQuery(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got, want := quoteLucene(`a"b\c`), `"a\"b\\c"`; got != want {
		t.Errorf("quoteLucene = %s, want %s", got, want)
	}
}
