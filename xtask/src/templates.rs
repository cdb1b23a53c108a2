//! Writing the CMake package and the pkg-config files from the templates in `cmake/`, without
//! CMake: `@VAR@` substitution as `configure_file(@ONLY)` does, and the `@PACKAGE_INIT@` and
//! `@PACKAGE_<var>@` expansions of `configure_package_config_file()`.

use std::path::{Component, Path};

use crate::util::Result;

/// Values for one template expansion.
pub struct Expansion<'a> {
    /// The template's file name, quoted in the `@PACKAGE_INIT@` banner.
    pub input_name: &'a str,
    /// Where the expanded file goes, relative to the prefix (for `@PACKAGE_INIT@`, e.g.
    /// `lib/cmake/regcheck`).
    pub install_dir: &'a str,
    /// The install prefix (only decides the "/usr move" block of `@PACKAGE_INIT@`).
    pub prefix: &'a Path,
    /// `@NAME@` values.
    pub vars: &'a [(&'a str, String)],
    /// `@PACKAGE_NAME@` paths relative to the prefix: `("LIB_INSTALL_DIR", "lib")` gives
    /// `${PACKAGE_PREFIX_DIR}/lib`.
    pub path_vars: &'a [(&'a str, &'a str)],
}

/// Expands `template`. An `@NAME@` with no value is an error (configure_file would silently
/// make it empty).
pub fn expand(template: &str, x: &Expansion) -> Result<String> {
    let mut out = String::with_capacity(template.len() + 1024);
    let mut rest = template;
    while let Some(start) = rest.find('@') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('@') {
            let name = &after[..name_len];
            out.push_str(&value(name, x)?);
            rest = &after[name_len + 1..];
        } else {
            out.push('@');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn value(name: &str, x: &Expansion) -> Result<String> {
    if name == "PACKAGE_INIT" {
        return Ok(package_init(x));
    }
    if let Some((_, v)) = x.vars.iter().find(|(k, _)| *k == name) {
        return Ok(v.clone());
    }
    if let Some(var) = name.strip_prefix("PACKAGE_") {
        if let Some((_, rel)) = x.path_vars.iter().find(|(k, _)| *k == var) {
            return Ok(format!("${{PACKAGE_PREFIX_DIR}}/{rel}"));
        }
    }
    Err(format!("{}: no value for @{name}@", x.input_name))
}

/// The `@PACKAGE_INIT@` block, as CMake's configure_package_config_file() writes it:
/// `PACKAGE_PREFIX_DIR` from the config file's own directory, the "/usr move" fix-up when the
/// package lands under `/usr/lib` or `/lib`, and the `set_and_check` and
/// `check_required_components` macros.
pub fn package_init(x: &Expansion) -> String {
    let depth = Path::new(x.install_dir).components().filter(|c| matches!(c, Component::Normal(_))).count();
    let relative = "../".repeat(depth);
    let mut s = format!(
        "\n####### Expanded from @PACKAGE_INIT@ by configure_package_config_file() #######\n\
         ####### Any changes to this file will be overwritten by the next CMake run ####\n\
         ####### The input file was {}                            ########\n\n\
         get_filename_component(PACKAGE_PREFIX_DIR \"${{CMAKE_CURRENT_LIST_DIR}}/{relative}\" ABSOLUTE)\n",
        x.input_name
    );
    let abs_install_dir = x.prefix.join(x.install_dir);
    let abs = abs_install_dir.to_string_lossy();
    if usr_move_candidate(&abs) {
        s += &format!(
            "\n# Use original install prefix when loaded through a \"/usr move\"\n\
             # cross-prefix symbolic link such as /lib -> /usr/lib.\n\
             get_filename_component(_realCurr \"${{CMAKE_CURRENT_LIST_DIR}}\" REALPATH)\n\
             get_filename_component(_realOrig \"{abs}\" REALPATH)\n\
             if(_realCurr STREQUAL _realOrig)\n  set(PACKAGE_PREFIX_DIR \"{}\")\nendif()\n\
             unset(_realOrig)\nunset(_realCurr)\n",
            x.prefix.display()
        );
    }
    s += "\nmacro(set_and_check _var _file)\n\
          \x20 set(${_var} \"${_file}\")\n\
          \x20 if(NOT EXISTS \"${_file}\")\n\
          \x20   message(FATAL_ERROR \"File or directory ${_file} referenced by variable ${_var} does not exist !\")\n\
          \x20 endif()\n\
          endmacro()\n\
          \nmacro(check_required_components _NAME)\n\
          \x20 foreach(comp ${${_NAME}_FIND_COMPONENTS})\n\
          \x20   if(NOT ${_NAME}_${comp}_FOUND)\n\
          \x20     if(${_NAME}_FIND_REQUIRED_${comp})\n\
          \x20       set(${_NAME}_FOUND FALSE)\n\
          \x20     endif()\n\
          \x20   endif()\n\
          \x20 endforeach()\n\
          endmacro()\n\
          \n####################################################################################";
    s
}

/// CMake's test `^(/usr)?/lib(64)?/.+` on the absolute install directory.
fn usr_move_candidate(abs: &str) -> bool {
    let rest = abs.strip_prefix("/usr").unwrap_or(abs);
    let Some(rest) = rest.strip_prefix("/lib") else {
        return false;
    };
    let rest = rest.strip_prefix("64").unwrap_or(rest);
    rest.len() > 1 && rest.starts_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x<'a>(vars: &'a [(&'a str, String)], prefix: &'a Path) -> Expansion<'a> {
        Expansion {
            input_name: "fooConfig.cmake.in",
            install_dir: "lib/cmake/foo",
            prefix,
            vars,
            path_vars: &[("INCLUDE_INSTALL_DIR", "include")],
        }
    }

    #[test]
    fn substitutes_variables_and_paths() {
        let vars = [("V", "1.2.3".to_string())];
        let out = expand("v=@V@ inc=@PACKAGE_INCLUDE_INSTALL_DIR@ mail a@b.c @ @@ @V", &x(&vars, Path::new("/opt/f")))
            .unwrap();
        assert_eq!(out, "v=1.2.3 inc=${PACKAGE_PREFIX_DIR}/include mail a@b.c @ @@ @V");
    }

    #[test]
    fn unknown_variables_are_errors() {
        let err = expand("@NOPE@", &x(&[], Path::new("/opt/f"))).unwrap_err();
        assert!(err.contains("@NOPE@"), "{err}");
    }

    #[test]
    fn package_init_derives_the_prefix_from_the_file() {
        let init = expand("@PACKAGE_INIT@", &x(&[], Path::new("/opt/f"))).unwrap();
        assert!(init.contains("\"${CMAKE_CURRENT_LIST_DIR}/../../../\" ABSOLUTE)"), "{init}");
        assert!(init.contains("macro(check_required_components _NAME)"));
        assert!(!init.contains("/usr move"));
        let usr = expand("@PACKAGE_INIT@", &x(&[], Path::new("/usr"))).unwrap();
        assert!(usr.contains("get_filename_component(_realOrig \"/usr/lib/cmake/foo\" REALPATH)"), "{usr}");
        assert!(usr_move_candidate("/lib64/cmake/x") && !usr_move_candidate("/usr/local/lib/cmake/x"));
    }
}
