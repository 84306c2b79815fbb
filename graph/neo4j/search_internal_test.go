package neo4j

import "testing"

func TestLuceneQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`foo:bar AND (`, `"foo" OR "bar" OR "and"`},
		{`"`, ``},
		{`*  ~ \ ^2`, `"2"`},
		{`Café naïve 日本語`, `"café" OR "naïve" OR "日本語"`},
		{`deploy deploy DEPLOY`, `"deploy"`},
		{`x"y\z`, `"x" OR "y" OR "z"`},
		{``, ``},
	} {
		if got := luceneQuery(queryTerms(tc.in)); got != tc.want {
			t.Errorf("luceneQuery(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestQueryTermsBounded(t *testing.T) {
	in := ""
	for i := 0; i < 500; i++ {
		in += " w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if n := len(queryTerms(in)); n != maxQueryTerms {
		t.Fatalf("%d terms, want %d", n, maxQueryTerms)
	}
}
