package generator

// SkeletonOf is skeletonOf, for the tests of package generator_test.
var SkeletonOf = skeletonOf
