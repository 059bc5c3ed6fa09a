package index

// slab holds values in numbered slots and reuses the slots of removed values, so that
// indexes can name a value by a pointer-free int32.
type slab[T any] struct {
	slots []T
	free  []int32
}

// add stores v in a free slot, or a new one, and returns the slot.
func (s *slab[T]) add(v T) int32 {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.slots[i] = v
		return i
	}
	s.slots = append(s.slots, v)
	return int32(len(s.slots) - 1)
}

// release frees slot i; its zero value keeps nothing alive.
func (s *slab[T]) release(i int32) {
	var zero T
	s.slots[i] = zero
	s.free = append(s.free, i)
}
