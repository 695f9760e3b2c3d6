-- A module that returns nothing: require stores true in package.loaded.
NORETURN_RAN = true
