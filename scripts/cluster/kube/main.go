// Package main only names the commands the wrapper module builds, so that `go mod tidy` keeps what
// they need; scripts/cluster.sh builds each command's own package (k8s.io/kubernetes/cmd/...).
package main

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {}
