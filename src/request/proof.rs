//! The validation of proof requests against the tree as it stands: every refusal names its
//! field, as everywhere else.

use crate::error::FieldError;

/// The (seq, tree size) of an inclusion proof in a tree of at most `current` events; a tree
/// size of 0 means the whole tree.
pub fn inclusion(seq: u64, tree_size: u64, current: u64) -> Result<(u64, u64), FieldError> {
    let size = if tree_size == 0 { current } else { tree_size };
    if size > current {
        return Err(FieldError::new(
            "tree_size",
            format!("{size} is beyond the trail's {current} events"),
        ));
    }
    if seq == 0 || seq > size {
        return Err(FieldError::new("seq", format!("must be from 1 to the tree size, {size}")));
    }
    Ok((seq, size))
}

/// The (old, new) sizes of a consistency proof in a tree of at most `current` events; a new
/// size of 0 means the whole tree.
pub fn consistency(old: u64, new: u64, current: u64) -> Result<(u64, u64), FieldError> {
    let new = if new == 0 { current } else { new };
    if new > current {
        return Err(FieldError::new(
            "new_size",
            format!("{new} is beyond the trail's {current} events"),
        ));
    }
    if old == 0 || old > new {
        return Err(FieldError::new("old_size", format!("must be from 1 to the new size, {new}")));
    }
    Ok((old, new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proofs_are_asked_only_of_trees_that_exist_and_refusals_name_the_field() {
        assert_eq!(inclusion(3, 0, 10), Ok((3, 10)));
        assert_eq!(inclusion(0, 5, 10).unwrap_err().field, "seq");
        assert_eq!(inclusion(6, 5, 10).unwrap_err().field, "seq");
        assert_eq!(inclusion(1, 11, 10).unwrap_err().field, "tree_size");
        assert_eq!(consistency(4, 0, 10), Ok((4, 10)));
        assert_eq!(consistency(0, 5, 10).unwrap_err().field, "old_size");
        assert_eq!(consistency(6, 5, 10).unwrap_err().field, "old_size");
        assert_eq!(consistency(1, 11, 10).unwrap_err().field, "new_size");
    }
}
