//! The character grid tview draws into, and its two printed forms (`bam_tview_html.c`): plain
//! text (with ANSI colours on a terminal) and an HTML page.

/// `html_colorpair(i)`: colour i as one attribute bit.
pub fn colour(i: u32) -> u32 {
    1 << i
}

/// `html_underline`: the underline bit.
pub const UNDERLINE: u32 = 1 << 10;

#[derive(Clone, Copy)]
struct Cell {
    ch: u8,
    attr: u32,
}

/// Rows of `width` cells, made as the drawing reaches them (`html_mvaddch`).
pub struct Screen {
    width: usize,
    rows: Vec<Vec<Cell>>,
}

impl Screen {
    pub fn new(width: usize) -> Screen {
        Screen { width, rows: Vec::new() }
    }

    /// `mvaddch` with attributes `attr`; off the right edge it draws nothing (nor adds rows).
    pub fn put(&mut self, y: usize, x: usize, ch: u8, attr: u32) {
        if x >= self.width {
            return;
        }
        while self.rows.len() <= y {
            self.rows.push(vec![Cell { ch: b' ', attr: 0 }; self.width]);
        }
        self.rows[y][x] = Cell { ch, attr };
    }

    /// `mvprintw(y, x, "%-lld", n)`.
    pub fn put_number(&mut self, y: usize, x: usize, n: i64) {
        for (i, c) in n.to_string().bytes().enumerate() {
            self.put(y, x + i, c, 0);
        }
    }

    /// The lowest set bit of `attr` below 32 (the CSS class number), 32 when none.
    fn class(attr: u32) -> u32 {
        attr.trailing_zeros()
    }

    /// `text_drawaln`'s printing: every row `width` characters; on a terminal each cell in its
    /// ANSI colour and underline.
    pub fn text(&self, is_terminal: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.rows.len() * (self.width + 1));
        for row in &self.rows {
            for cell in row {
                if is_terminal {
                    let code: &[u8] = match Self::class(cell.attr) {
                        1 | 9 => b"\x1b[34m",
                        2 | 5 => b"\x1b[32m",
                        3 | 7 => b"\x1b[33m",
                        6 => b"\x1b[36m",
                        8 => b"\x1b[31m",
                        _ => b"",
                    };
                    out.extend_from_slice(code);
                    if cell.attr & UNDERLINE != 0 {
                        out.extend_from_slice(b"\x1b[4m");
                    }
                }
                out.push(cell.ch);
                if is_terminal {
                    out.extend_from_slice(b"\x1b[0m");
                    if cell.attr & UNDERLINE != 0 {
                        out.extend_from_slice(b"\x1b[0m");
                    }
                }
            }
            out.push(b'\n');
        }
        out
    }

    /// `html_drawaln`'s page, titled `title` (`chr:pos`): one `<span>` per run of cells with
    /// the same attributes, rows joined by `<br/>`.
    pub fn html(&self, title: &str) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"<html><head>");
        out.extend_from_slice(format!("<title>{title}</title>").as_bytes());
        out.extend_from_slice(b"<style type='text/css'>\n");
        out.extend_from_slice(
            b".tviewbody { margin:5px; background-color:white;text-align:center;}\n",
        );
        out.extend_from_slice(b".tviewtitle {text-align:center;}\n");
        out.extend_from_slice(b".tviewpre { margin:5px; background-color:white;}\n");
        let colours =
            ["black", "blue", "green", "yellow", "black", "green", "cyan", "yellow", "red", "blue"];
        for (id, c) in colours.iter().enumerate() {
            let css = format!(
                ".tviewc{id} {{color:{c};}}\n.tviewcu{id} {{color:{c};text-decoration:underline;}}\n"
            );
            out.extend_from_slice(css.as_bytes());
        }
        out.extend_from_slice(b"</style>");
        out.extend_from_slice(b"</head><body>");
        let head = format!("<div class='tviewbody'><div class='tviewtitle'>{title}</div>");
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(b"<pre class='tviewpre'>");
        for (y, row) in self.rows.iter().enumerate() {
            for (x, cell) in row.iter().enumerate() {
                if x == 0 || cell.attr != row[x - 1].attr {
                    out.extend_from_slice(b"<span");
                    let class = Self::class(cell.attr);
                    if class < 32 {
                        let u = if cell.attr & UNDERLINE != 0 { "u" } else { "" };
                        out.extend_from_slice(format!(" class='tviewc{u}{class}'").as_bytes());
                    }
                    out.push(b'>');
                }
                match cell.ch {
                    b'<' => out.extend_from_slice(b"&lt;"),
                    b'>' => out.extend_from_slice(b"&gt;"),
                    b'&' => out.extend_from_slice(b"&amp;"),
                    c => out.push(c),
                }
                if x + 1 == row.len() || cell.attr != row[x + 1].attr {
                    out.extend_from_slice(b"</span>");
                }
            }
            if y + 1 < self.rows.len() {
                out.extend_from_slice(b"<br/>");
            }
        }
        out.extend_from_slice(b"</pre></div></body></html>");
        out
    }
}
