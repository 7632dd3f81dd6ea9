// Command etcd is etcd's own main (go.etcd.io/etcd/server/v3/etcdmain), built by scripts/cluster.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
