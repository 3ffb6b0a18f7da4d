// Command forwardgen writes kvstore/forward_store.go and forward_tx.go: the
// methods *kvstore.Store and *kvstore.Tx offer for their default column
// family, one per exported method of *columnfamily.ColumnFamily, each
// returning ErrInvalidArgument (an iteration yields it) on a nil receiver
// and otherwise calling the method of the same name on the default handle.
//
// Run it with go generate in kvstore (the directive is in
// kvstore/handles.go): go generate ./kvstore. Its test fails when the
// files in the tree differ from what it generates.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	cf := flag.String("columnfamily", "../columnfamily", "the columnfamily package's directory")
	out := flag.String("out", ".", "the kvstore package's directory")
	flag.Parse()
	if err := write(*cf, *out); err != nil {
		fmt.Fprintln(os.Stderr, "forwardgen:", err)
		os.Exit(1)
	}
}
