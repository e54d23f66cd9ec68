/* frontend/parse.h — what the flex scanner and the bison parser share. */
#ifndef TEC_FE_PARSE_H
#define TEC_FE_PARSE_H

#include "frontend/ast.h"

/* Bison location type: line/column of the first and last character plus the
 * byte offsets [first_off, last_off) so nodes can quote their source. */
typedef struct fe_yyloc {
    int first_line, first_column;
    int last_line, last_column;
    int first_off, last_off;
} fe_yyloc;

/* State of one file's parse.  The lexer fields implement newline handling:
 * a newline ends a statement only outside () and [] and after a token that
 * can end one; a '}' ends the statement before it. */
typedef struct fe_parser {
    ir_arena *arena;
    diag *d;
    fe_file *file;
    fe_vec *stmts;         /* the result: top-level statements */
    int nerrors;           /* syntax and lexical errors */
    int line, col, off;    /* position of the next character */
    int depth;             /* nesting of ( and [ */
    int last;              /* the last token returned (0 at the start) */
    int prev;              /* the token before it */
    int end_line, end_col, end_off;   /* just after the last real token */
    int before_line, before_col;      /* just after the token before it */
    /* A schedule body being scanned: where its '{' is, where the text
     * starts (just after the '{'), and the nesting of braces inside it. */
    int sched_line, sched_col;
    int body_line, body_col, body_off;
    int sched_depth;
} fe_parser;

/* Parses f->text into f->stmts; reports errors through d and returns false
 * if there were any.  Nodes live in arena a. */
bool fe_parse_file(fe_file *f, ir_arena *a, diag *d);

/* A span from a location. */
fe_span fe_span_of(const fe_parser *p, fe_yyloc l);

#endif
