//go:build !amd64 || purego

package hnsw

func dot(a, b []float32) float32 { return dotGo(a, b) }

func l2(a, b []float32) float32 { return l2Go(a, b) }

func dotI8(a []float32, b []int8) float32 { return dotI8Go(a, b) }

func prefetch([]float32) {}

func kernel() string { return "go" }
