// id-empty-file-after-header
// Empty file after header
// #4f46e5
