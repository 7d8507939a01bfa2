# Issue 32: idempotent note filing. One row per idempotency key (the Idempotency-Key header's digest, or the
# note origin's), unique per firm and filer, inserted in the transaction that files the note
# (graph_memory/models/writeback.py, notes.note_file). No note text: digests and the note's key.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):

    dependencies = [
        ('graph_memory', '0021_sight_without_strings'),
        migrations.swappable_dependency(conf.firm_model_label()),
        migrations.swappable_dependency(conf.case_model_label()),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='NoteFiling',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(help_text="SHA-256 of the Idempotency-Key header, or of the note's origin.", max_length=64)),
                ('fingerprint', models.CharField(help_text='SHA-256 of the case, title, text and origin filed.', max_length=64)),
                ('note_key', models.CharField(blank=True, help_text="The note's key (its source id is note:<key>).", max_length=200)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('case', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.case_model_label())),
                ('filer', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('firm', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.firm_model_label())),
            ],
            options={
                'indexes': [models.Index(fields=['case'], name='gm_note_filing_case')],
                'constraints': [models.UniqueConstraint(fields=('firm', 'filer', 'key'), name='gm_note_filing_key')],
            },
        ),
    ]
