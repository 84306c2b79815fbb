//go:build amd64 && !purego

package surprise

func useAVX2Here() bool { return useAVX2 }
