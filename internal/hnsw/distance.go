package hnsw

import "math"

// The distance kernels, in pure Go: four accumulators over blocks of eight
// elements, which the compiler keeps in registers and the CPU overlaps (a
// single accumulator is bound by the latency of one floating-point add).

// dotGo returns a·b; a and b have the same length.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// l2Go returns |a − b|²; a and b have the same length.
func l2Go(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		d0, d1, d2, d3 := x[0]-y[0], x[1]-y[1], x[2]-y[2], x[3]-y[3]
		d4, d5, d6, d7 := x[4]-y[4], x[5]-y[5], x[6]-y[6], x[7]-y[7]
		s0 += d0*d0 + d4*d4
		s1 += d1*d1 + d5*d5
		s2 += d2*d2 + d6*d6
		s3 += d3*d3 + d7*d7
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// dotI8Go returns a·b for an f32 a and an int8 b (the caller scales).
func dotI8Go(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += x[0]*float32(y[0]) + x[4]*float32(y[4])
		s1 += x[1]*float32(y[1]) + x[5]*float32(y[5])
		s2 += x[2]*float32(y[2]) + x[6]*float32(y[6])
		s3 += x[3]*float32(y[3]) + x[7]*float32(y[7])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotF16 returns a·b for an f32 a and a half-precision b.
func dotF16(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	t := &f16table
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * t[y[0]]
		s1 += x[1] * t[y[1]]
		s2 += x[2] * t[y[2]]
		s3 += x[3] * t[y[3]]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * t[b[i]]
	}
	return (s0 + s1) + (s2 + s3)
}

// l2F16 returns |a − b|² for an f32 a and a half-precision b.
func l2F16(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	t := &f16table
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		d0, d1, d2, d3 := x[0]-t[y[0]], x[1]-t[y[1]], x[2]-t[y[2]], x[3]-t[y[3]]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - t[b[i]]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// f16table maps every half-precision bit pattern to its float32 value.
var f16table = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = f16ToF32(uint16(i))
	}
	return t
}()

func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(man) / (1 << 24)
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// f32ToF16 rounds f to the nearest half-precision value (ties to even),
// saturating to ±Inf past the largest finite half.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	switch {
	case int32(b>>23&0xff) == 0xff: // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0: // subnormal half or zero
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - exp)
		h := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is right
	}
	if h >= 0x7c00 {
		return sign | 0x7c00
	}
	return sign | uint16(h)
}
