//! Small files the application names (HIXL's `local_comm_res_path`), read with a size bound.

use std::io::Read;

/// A small file that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SmallFileError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("larger than {} KiB", .max / 1024)]
    TooLarge { max: u64 },
}

/// The text of the file at `path` when it holds at most `max` bytes; never reads more than
/// `max + 1` of them.
pub fn read_small(path: &str, max: u64) -> Result<String, SmallFileError> {
    let f = std::fs::File::open(path)?;
    let mut text = String::new();
    f.take(max + 1).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(SmallFileError::TooLarge { max });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_bound_and_refuses_more() {
        let dir = std::env::temp_dir().join(format!("regcheck-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.json");
        std::fs::write(&path, vec![b'x'; 2048]).unwrap();
        let p = path.to_str().unwrap();
        assert_eq!(read_small(p, 2048).unwrap().len(), 2048);
        let e = read_small(p, 1024).unwrap_err();
        assert!(matches!(e, SmallFileError::TooLarge { max: 1024 }), "{e}");
        assert_eq!(e.to_string(), "larger than 1 KiB");
        let missing = dir.join("missing.json");
        assert!(matches!(read_small(missing.to_str().unwrap(), 1024), Err(SmallFileError::Io(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
